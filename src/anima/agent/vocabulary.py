"""Which actions a robot gets: the built-ins, narrowed to its animation library, the linked
humanoid's, and the user's own module (``agent.user_actions``).

The action machinery itself (definition, validation, the registry) is :mod:`anima.agent.actions`;
the built-in actions are :mod:`anima.agent.builtins` and :mod:`anima.agent.humanoid_actions`.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable
from typing import TYPE_CHECKING

from anima.agent.actions import ActionRegistry
from anima.behaviour.vocabulary import Vocabulary
from anima.errors import ActionDefinitionError
from anima.humanoid.commanded import CommandedHumanoid

if TYPE_CHECKING:
    from anima.agent.humanoid_actions import Humanoid
    from anima.agent.port import RobotPort


def load_user_actions(registry: ActionRegistry, module: str) -> None:
    """Import ``module`` and call its ``register(registry)`` (config: ``agent.user_actions``)."""
    try:
        mod = importlib.import_module(module)
    except ImportError as exc:
        raise ActionDefinitionError(f"agent.user_actions: cannot import {module!r}: {exc}") from exc
    except Exception as exc:  # the module's own code failed: say where, not a traceback
        raise ActionDefinitionError(
            f"agent.user_actions: importing {module!r} failed: {type(exc).__name__}: {exc}"
        ) from exc
    register = vars(mod).get("register")
    if not callable(register):
        raise ActionDefinitionError(
            f"agent.user_actions: module {module!r} has no register(registry) function"
        )
    try:
        register(registry)
    except ActionDefinitionError:
        raise
    except Exception as exc:
        raise ActionDefinitionError(
            f"agent.user_actions: {module}.register(registry) failed: {type(exc).__name__}: {exc}"
        ) from exc


def builtin_registry(
    *,
    animations: Iterable[str] | None = None,
    postures: Iterable[str] | None = None,
    humanoid: Humanoid | None = None,
) -> ActionRegistry:
    """A registry of the built-in actions (see :mod:`anima.agent.builtins`).

    ``animations``/``postures``: the names ``play_animation``/``look_at_target`` accept (any
    name when None; the library refuses unknown ones when the step runs). ``humanoid``: an
    :class:`~anima.humanoid.client.AdamClient` (or anything with the same methods) adds the
    walking, turning, stand-motion and posture actions.
    """
    from anima.agent.builtins import register_builtins

    registry = ActionRegistry()
    register_builtins(registry, animations=animations, postures=postures)
    if humanoid is not None:
        from anima.agent.humanoid_actions import register_humanoid

        register_humanoid(registry, humanoid)
    return registry


def robot_registry(
    robot: RobotPort, *, user_actions: str | None = None, humanoid: Humanoid | None = None
) -> ActionRegistry:
    """The registry for a robot: the built-ins narrowed to its vocabulary (its animation
    library without the shutdown animation and the looping idle ones, which are not gestures
    to ask for), the humanoid actions for ``humanoid`` or, when the robot has a humanoid
    linked, through its ``execute``, and ``user_actions``' own (``agent.user_actions``)."""
    vocabulary = robot.vocabulary()
    if humanoid is None and vocabulary.humanoid:
        # through execute at each call: the agent is built before the runtime starts the
        # link, and its actions must exist from the start
        humanoid = CommandedHumanoid(robot.execute)
    return vocabulary_registry(vocabulary, user_actions=user_actions, humanoid=humanoid)


def vocabulary_registry(
    vocabulary: Vocabulary, *, user_actions: str | None = None, humanoid: Humanoid | None = None
) -> ActionRegistry:
    """The registry for ``vocabulary`` (no robot needed: ``anima agent actions``), with the
    humanoid actions calling ``humanoid`` when one is given."""
    registry = builtin_registry(
        animations=vocabulary.gestures, postures=vocabulary.postures, humanoid=humanoid
    )
    if user_actions:
        load_user_actions(registry, user_actions)
    return registry
