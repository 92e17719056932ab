"""The conversation's phase: what a person can read from the robot, published on every change.

=============== =================================================================
``idle``        nobody is talking with the robot (the start; ``agent.engaged_s`` after a turn)
``engaged``     a conversation is going on: between turns, the person may speak next
``listening``   a wake was heard (the phrase, push-to-talk, a door): the robot listens
``thinking``    a request was heard and is being planned and acted on
``speaking``    the robot talks
``interrupted`` the person talked over the robot and stopped it (full duplex); listening follows
``sleeping``    idle for ``agent.sleep_after_s``: only a wake (the phrase, a door) wakes it
=============== =================================================================

:class:`Presence` holds the phase. Every change is a
:class:`~anima.events.ConversationChanged` event (``conversation`` on the event stream and the
dashboard), and the phase is in the state snapshot every front door reports (``conversation``:
the MQTT retained state, ``GET /api/state``). The conversation moves it
(:mod:`~anima.agent.conversation`, :mod:`~anima.agent.interruption`); its own timer (a
callback on the robot's clock, :meth:`~anima.agent.port.RobotPort.call_later`) moves
``engaged`` to ``idle`` and ``idle`` to ``sleeping``.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from anima.clock import Clock
from anima.events import ConversationChanged, ConversationPhase, Event

CallLater = Callable[[float, Callable[[], None]], Callable[[], None]]  # (seconds, fn) → cancel


class Presence:
    """The phase (see the module docstring); thread-safe."""

    def __init__(
        self,
        publish: Callable[[Event], None],
        clock: Clock,
        call_later: CallLater,
        *,
        engaged_s: float = 20.0,
        sleep_after_s: float | None = 600.0,
    ) -> None:
        self._publish = publish
        self._clock = clock
        self._call_later = call_later
        self.engaged_s = engaged_s
        self.sleep_after_s = sleep_after_s
        self._lock = threading.Lock()
        self._state: ConversationPhase = "idle"
        self._cancel: Callable[[], None] | None = None
        self._armed = 0  # bumped at every arming: a late timer of an older one does nothing
        self._closed = False
        self._arm_locked("idle")

    @property
    def state(self) -> ConversationPhase:
        with self._lock:
            return self._state

    def to(
        self, state: ConversationPhase, reason: str, *, when: tuple[ConversationPhase, ...] = ()
    ) -> None:
        """Move to ``state`` — only from one of ``when``, if given (nothing happens when already
        there, but a stay in ``engaged`` starts its time again)."""
        self._move(state, reason, when=when)

    def _move(
        self, state: ConversationPhase, reason: str, *,
        when: tuple[ConversationPhase, ...] = (), armed: int | None = None,
    ) -> None:  # fmt: skip
        with self._lock:
            previous = self._state
            if self._closed or (armed is not None and armed != self._armed):
                return
            if when and previous not in when:
                return
            self._arm_locked(state)
            if state == previous:
                return
            self._state = state
        self._publish(
            ConversationChanged(t=self._clock.now(), state=state, previous=previous, reason=reason)
        )

    def close(self) -> None:
        with self._lock:
            self._closed = True
            if self._cancel is not None:
                self._cancel()
                self._cancel = None

    def _arm_locked(self, state: ConversationPhase) -> None:
        self._armed += 1
        if self._cancel is not None:
            self._cancel()
            self._cancel = None
        after: float | None = None
        then: ConversationPhase = "idle"
        if state == "engaged":
            after, then = self.engaged_s, "idle"
        elif state == "idle":
            after, then = self.sleep_after_s, "sleeping"
        if after is None:
            return
        reason = f"nobody spoke for {after:g} s"
        armed = self._armed
        self._cancel = self._call_later(after, lambda: self._move(then, reason, armed=armed))
