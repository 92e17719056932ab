"""Actions for a humanoid (the Adam robot): walk, turn, stop walking, stand motions, posture.

They are written against :class:`Humanoid`, the four calls they need, so they work with
:class:`~anima.humanoid.client.AdamClient` (which checks the robot's enable lists before each
command) and with any stand-in that has the same methods. A refusal by the robot (not in Walk,
a motion not allowed now) fails the step with the robot's reason, which goes back to the planner.

Walking is timed: ``walk_forward(seconds=2)`` sets a continuous speed, waits on the plan's
cancel event, and always sets the speed back to zero, whether the time ran out or the plan was
interrupted.
"""

from __future__ import annotations

import contextlib
import logging
from typing import Literal, Protocol

from anima.agent.actions import ActionRegistry, ActionResult, make_action
from anima.agent.builtins import halt
from anima.agent.context import ActionContext
from anima.agent.phrases import Phrase
from anima.errors import AnimaError
from anima.humanoid.spec import MOTIONS, POSTURE

log = logging.getLogger(__name__)


class Humanoid(Protocol):
    """What the humanoid actions call (AdamClient has all four)."""

    def speed(self, x: float, y: float, yaw: float, /, *, continuous: bool = False) -> str: ...

    def stand_motion(self, motion: str, /) -> str: ...

    def posture(self, pitch: float, roll: float, yaw: float, height: float, /) -> str: ...

    def set_mode(self, mode: str, /) -> str: ...


_SECONDS = (0.1, 30.0)  # one walking step of a plan, seconds
_GAIT_HINT = "; switch to walking first with set_gait('Walk')"


def register_humanoid(registry: ActionRegistry, robot: Humanoid) -> None:
    """Add the humanoid actions for ``robot``; ``stop`` also stops its walking."""

    def move(ctx: ActionContext, x: float, y: float, yaw: float, seconds: float) -> ActionResult:
        try:
            robot.speed(x, y, yaw, continuous=True)
        except AnimaError as exc:
            return (False, f"{exc}{_GAIT_HINT}")
        try:
            if not ctx.sleep(seconds):
                return (False, "interrupted")
        finally:
            _stand_still(robot)
        return True

    def walk_forward(ctx: ActionContext, seconds: float = 2.0, speed: float = 0.3) -> ActionResult:
        """Walk forward for a while, then stand still (needs the Walk or Run gait).

        Args:
            seconds: how long to walk
            speed: metres per second
        """
        return move(ctx, speed, 0.0, 0.0, seconds)

    def walk_backward(ctx: ActionContext, seconds: float = 2.0, speed: float = 0.2) -> ActionResult:
        """Walk backward for a while, then stand still (needs the Walk or Run gait).

        Args:
            seconds: how long to walk
            speed: metres per second
        """
        return move(ctx, -speed, 0.0, 0.0, seconds)

    def turn(
        ctx: ActionContext,
        direction: Literal["left", "right"],
        seconds: float = 2.0,
        rate: float = 0.5,
    ) -> ActionResult:
        """Turn on the spot for a while, then stand still (needs the Walk or Run gait).

        Args:
            direction: left or right
            seconds: how long to turn
            rate: radians per second
        """
        return move(ctx, 0.0, 0.0, rate if direction == "left" else -rate, seconds)

    def stop_walking(ctx: ActionContext) -> ActionResult:
        """Stop walking or turning now."""
        robot.speed(0.0, 0.0, 0.0)
        return True

    def set_gait(ctx: ActionContext, mode: Literal["Stand", "Walk", "Run"]) -> ActionResult:
        """Switch the humanoid's mode: Stand (still, for stand motions and posture), Walk or Run.

        Args:
            mode: Stand, Walk or Run
        """
        return (True, robot.set_mode(mode))

    def stand_motion(ctx: ActionContext, name: str) -> ActionResult:
        """Play a whole-body motion while standing (needs the Stand mode).

        Args:
            name: the motion
        """
        return (True, robot.stand_motion(name))

    def posture(
        ctx: ActionContext,
        pitch: float = 0.0,
        roll: float = 0.0,
        yaw: float = 0.0,
        height: float = 0.0,
    ) -> ActionResult:
        """Lean, twist or crouch the standing body; all zero is the neutral stance.

        Args:
            pitch: lean forward (positive) or back, radians
            roll: lean sideways, radians
            yaw: twist the torso, radians
            height: crouch, metres below full height (0 or negative)
        """
        return (True, robot.posture(pitch, roll, yaw, height))

    def stop(ctx: ActionContext) -> ActionResult:
        """Stop: walking stops, the current gesture eases to a hold, speech is dropped."""
        halt(ctx)
        _stand_still(robot)
        return True

    speeds = {"speed": (0.05, 1.0)}
    actions = [
        make_action(
            walk_forward,
            phrases=(
                "walk forward",
                "walk",
                "go forward",
                Phrase("walk forward {seconds} seconds"),
            ),
            bounds={"seconds": _SECONDS, **speeds},
        ),
        make_action(
            walk_backward,
            phrases=("walk back", "walk backward", "walk backwards", "go back", "step back"),
            bounds={"seconds": _SECONDS, "speed": (0.05, 0.5)},
        ),
        make_action(
            turn,
            phrases=(
                Phrase("turn left", direction="left"),
                Phrase("turn right", direction="right"),
                Phrase("turn around", direction="left", seconds=6.3),
            ),
            bounds={"seconds": _SECONDS, "rate": (0.1, 1.0)},
        ),
        make_action(stop_walking, phrases=("stop walking", "stand still", "halt")),
        make_action(
            set_gait,
            phrases=(
                Phrase("start walking", mode="Walk"),
                Phrase("get ready to walk", mode="Walk"),
                Phrase("start running", mode="Run"),
                Phrase("stand up", mode="Stand"),
            ),
        ),
        make_action(
            stand_motion,
            phrases=(
                Phrase("greet", name="Greeting"),
                Phrase("do a greeting", name="Greeting"),
                Phrase("stretch", name="Stretching"),
                Phrase("salute", name="Gentleman's Salute"),
                Phrase("expand your chest", name="Chest Expansion"),
            ),
            choices={"name": tuple(MOTIONS)},
        ),
        make_action(
            posture,
            phrases=(
                Phrase("lean forward", pitch=0.08),
                Phrase("crouch", height=-0.15),
                Phrase("stand tall"),
            ),
            bounds={
                "pitch": _range("stand_pitch"),
                "roll": _range("stand_roll"),
                "yaw": _range("stand_yaw"),
                "height": _range("stand_height"),
            },
        ),
    ]
    for act in actions:
        registry.add(act)
    old = registry.get("stop")
    registry.add(
        make_action(stop, phrases=old.phrases if old is not None else ("stop",)), replace=True
    )


def _range(axis: str) -> tuple[float, float]:
    r = POSTURE[axis]
    return (r.low, r.high)


def _stand_still(robot: Humanoid) -> None:
    # outside Walk/Run the robot is not moving its feet: a refusal here means "nothing to stop"
    with contextlib.suppress(AnimaError):
        robot.speed(0.0, 0.0, 0.0)
