"""What the agent needs of a robot: the port it is written against, not the runtime.

The runtime has all of it (:class:`~anima.runtime.Runtime` satisfies :class:`RobotPort` as it
is); a test may hand the agent anything else that does. Every command goes through
:meth:`RobotPort.execute`, the path every front door takes, so what the agent may do is what
the runtime allows (refusals, the emergency stop). No module of :mod:`anima.agent` imports the
runtime.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol

from anima import commands as cmd
from anima.behaviour.vocabulary import Vocabulary
from anima.clock import Clock
from anima.events import Event

__all__ = ["RobotPort", "Vocabulary"]


class RobotPort(Protocol):
    """A robot as the agent drives it."""

    @property
    def execute(self) -> cmd.Execute:
        """Carry out a typed command (AnimaError when refused); its result by command."""

    @property
    def clock(self) -> Clock:
        """The motion loop's clock: every event's ``t`` is on it."""

    def call_later(self, seconds: float, fn: Callable[[], None]) -> Callable[[], None]:
        """Call ``fn`` (on the robot's timer thread) after ``seconds`` on :attr:`clock`;
        returns its cancel."""
        ...

    @property
    def speaking(self) -> bool:
        """An utterance plays or waits."""

    @property
    def estopped(self) -> bool:
        """The emergency stop is on: moves and speech are refused until the reset."""

    @property
    def moving(self) -> bool:
        """A move plays or waits (idle layers and offsets do not count)."""

    def vocabulary(self) -> Vocabulary:
        """The names the agent's actions may use (the library loaded now)."""

    def subscribe(self, handler: Callable[[Event], None], *kinds: str) -> Callable[[], None]:
        """Call ``handler`` with each event of ``kinds`` (all when none), on the hub's thread;
        returns the unsubscribe."""

    def publish(self, event: Event) -> None:
        """Publish an event (the agent's own: conversation phases, steps, notices)."""

    def prepare_speech(self, texts: Sequence[str], locale: str) -> None:
        """Synthesize ``texts`` ahead (the agent's canned phrases); nothing without speech."""
