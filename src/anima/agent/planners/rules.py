"""The offline rule planner: what the person said, understood from the registry alone.

It answers through :mod:`anima.agent.understanding` (see its docstring for what is
understood and how): a request it understands becomes validated action strings and nothing
to say; a question about the robot, a courtesy or a refusal becomes words to say and no
actions; anything else is "Sorry, I didn't understand “…”. I can …" and nothing moves. The
registry is compiled once, and again when its actions change (a user's module added one).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from anima.agent.actions import Action, ActionRegistry
from anima.agent.planners.base import PlannerReply
from anima.agent.understanding import NOT_UNDERSTOOD, About, Understander, Understanding

if TYPE_CHECKING:
    from anima.agent.persona import Persona
    from anima.agent.remembering import Remembering

log = logging.getLogger(__name__)

UNKNOWN = NOT_UNDERSTOOD  # what is said when nothing is understood begins so


class RulePlanner:
    """Maps what a person says to actions, answers or refusals; needs nothing but the registry."""

    name = "rules"

    def __init__(
        self, registry: ActionRegistry, *, wake_phrase: str = "hey robot", name: str = "Anima"
    ) -> None:
        self.registry = registry
        self.about = About(name=name, wake_phrase=wake_phrase)
        self._actions: tuple[Action, ...] = tuple(registry)
        self._understander = Understander(registry, about=self.about)
        self._last: list[str] = []  # the last plan, for "do it again"
        self._before: list[str] = []  # … and the one before it (retract)
        self.memory: Remembering | None = None  # names and facts told (remember_with)

    def speak_as(self, persona: Persona) -> None:
        """Answer "who made you", "hello" and "what can you do" as ``persona`` says (its
        name is the planner's already: :func:`~anima.agent.persona.agent_as`)."""
        self.about = About(
            name=persona.name or self.about.name, wake_phrase=self.about.wake_phrase,
            made_by=persona.made_by, greeting=persona.greeting, offers=persona.actions,
        )  # fmt: skip
        self._understander = Understander(self.registry, about=self.about)

    def remember_with(self, memory: Remembering) -> None:
        """Understand "my name is …", "remember that …", "what's my name", "forget …" on
        ``memory`` before the other rules (:mod:`anima.agent.remembering`)."""
        self.memory = memory

    # ------------------------------------------------------------------ the protocol
    def plan(self, request: str) -> PlannerReply:
        understood = self.understanding(request)
        log.debug("understood %r as %s: %s", request[:80], understood.kind, understood.why)
        self._before = self._last
        if understood.kind == "act":
            if not set(understood.actions) <= {"stop()", "finish()"}:
                self._last = understood.actions
            return PlannerReply(response=understood.response, actions=understood.actions)
        return PlannerReply(response=understood.response)

    def feedback(self, summary: str) -> PlannerReply | None:
        return None  # commands are one-shot: nothing to follow up

    def reset(self) -> None:
        """Forget the last plan ("do it again" has nothing to repeat)."""
        self._last = self._before = []

    def retract(self) -> None:
        """Forget the last request: "do it again" repeats the plan before it."""
        self._last = self._before

    def interrupt(self) -> None:
        """Nothing in flight."""

    def close(self) -> None:
        """Nothing to release."""

    # ------------------------------------------------------------------ understanding
    def understanding(self, request: str) -> Understanding:
        """The whole :class:`~anima.agent.understanding.Understanding` of ``request``."""
        if self.memory is not None:
            from anima.agent.remembering import understand_memory

            about_memory = understand_memory(request, self.memory, robot_name=self.about.name)
            if about_memory is not None:
                return about_memory
        return self._compiled().understand(request, previous=self._last)

    def understand(self, request: str) -> list[str] | None:
        """The action strings for ``request``, or None when it asks for no action."""
        understood = self.understanding(request)
        return understood.actions if understood.kind == "act" else None

    def _compiled(self) -> Understander:
        # actions are immutable: a registry changed since (an action added or narrowed) holds
        # other objects, and the phrases and senses are compiled again
        actions = tuple(self.registry)
        if len(actions) != len(self._actions) or any(
            a is not b for a, b in zip(actions, self._actions, strict=True)
        ):
            self._actions = actions
            self._understander = Understander(self.registry, about=self.about)
        return self._understander
