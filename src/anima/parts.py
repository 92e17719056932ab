"""The parts a runtime starts after its loop and stops before it, and their order.

A part is a front door (MQTT, REST, …), the broker a door started, the voice agent or the
humanoid link. Each has three steps: :meth:`Part.prepare` (imports and model loads, once the
loop has run its first tick, on the starting thread), :meth:`Part.start` and :meth:`Part.stop`.
:class:`Parts` keeps them in start order and stops exactly those it prepared, last first,
whether the runtime stops or a start failed part-way. :class:`Deferred` makes its parts only
at prepare: what costs time to import or to find (the MQTT door's modules and its broker) is
then not in the way of the first tick.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Protocol

from anima.events import ConversationPhase, Transcript

log = logging.getLogger(__name__)

PART_STOP_S = 5.0  # the longest one part takes to stop


class Part(Protocol):
    def prepare(self) -> None:
        """Imports and model loads, at start once the loop runs; no thread, no socket yet. Called
        once, then :meth:`start`."""

    def start(self) -> None: ...

    def stop(self, timeout: float = PART_STOP_S) -> None:
        """Stop within ``timeout`` seconds; a part prepared but never started stops at once."""


FrontDoor = Part  # the name the front doors know it by


class Agent(Part, Protocol):
    """The voice agent as the runtime sees it (anima.agent.conversation.Conversation): a part
    that wakes on :class:`~anima.commands.Listen`, plans what :class:`~anima.commands.Ask`
    says, and whose phase the state shows."""

    def wake(self, source: str = "manual") -> None: ...

    def hear(self, transcript: Transcript) -> None: ...

    @property
    def phase(self) -> ConversationPhase: ...


class Parts:
    """Parts in start order; :meth:`stop` stops exactly those :meth:`prepare` reached."""

    def __init__(self) -> None:
        self.all: list[Part] = []  # in start order
        self._owned: list[Part] = []  # prepared (and then started), in order

    def add(self, part: Part, *, running: bool) -> None:
        """Add ``part`` last; prepared and started at once when the parts are ``running``."""
        self.all.append(part)
        if running:
            self._owned.append(part)
            part.prepare()
            part.start()

    def remove(self, part: Part) -> None:
        """Take ``part`` away, stopping it when it was prepared."""
        self.all.remove(part)
        if part in self._owned:
            self._owned.remove(part)
            part.stop(PART_STOP_S)

    def flat(self) -> list[Part]:
        """Every part in start order, a :class:`Deferred` one's own parts in its place."""
        return [made for p in self.all for made in (p.made if isinstance(p, Deferred) else [p])]

    def prepare(self) -> None:
        """Prepare each part in order (the first failure stops nothing: :meth:`stop` does)."""
        for part in self.all:
            self._owned.append(part)
            part.prepare()

    def start(self) -> None:
        for part in self.all:
            part.start()

    def stop(self) -> None:
        """Stop every part prepared, last first; one that fails to stop is logged and the
        rest still stop."""
        owned, self._owned = self._owned, []
        for part in reversed(owned):
            try:
                part.stop(PART_STOP_S)
            except Exception:  # one part must not keep the robot from resting
                log.exception("stopping %r failed", part)


class Deferred:
    """Parts made when this one is prepared: ``make()`` imports what they need and returns
    them in start order; each is then prepared, started in order and stopped last first.
    ``made`` is empty until then (:attr:`anima.runtime.Runtime.frontdoors` lists them in its
    place once made)."""

    def __init__(self, make: Callable[[], list[Part]]) -> None:
        self._make = make
        self.made: list[Part] = []
        self._prepared: list[Part] = []

    def prepare(self) -> None:
        self.made = self._make()
        for part in self.made:
            self._prepared.append(part)
            part.prepare()

    def start(self) -> None:
        for part in self.made:
            part.start()

    def stop(self, timeout: float = PART_STOP_S) -> None:
        prepared, self._prepared = self._prepared, []
        for part in reversed(prepared):
            try:
                part.stop(timeout)
            except Exception:  # the others still stop
                log.exception("stopping %r failed", part)
