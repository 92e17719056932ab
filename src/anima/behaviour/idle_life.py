"""Idle life: the full blink Nadine gives every few seconds when nothing else moves.

Natural blinking (random intervals) is the engine's ``Blink`` idle layer. This adds the seed's
periodic full blink: ``every_s`` seconds after the last primary move started or finished, when
none runs or waits, a full blink (``blink`` while a gaze target is latched, else
``LOOKUPPostureDefaultBlink``). It is a callback on the runtime's :class:`~anima.timers.Timers`
(the injected clock), moved by each move event: it never polls, and a test on a fake clock
sees it at the exact second.
"""

from __future__ import annotations

import logging
import threading

from anima.behaviour.controller import Behaviour
from anima.errors import AnimaError, EngineStateError
from anima.events import Event, MoveFinished, MoveStarted
from anima.timers import Cancel, Timers

log = logging.getLogger(__name__)


class IdleLife:
    def __init__(self, behaviour: Behaviour, timers: Timers, *, every_s: float = 8.0) -> None:
        self._behaviour = behaviour
        self._engine = behaviour.engine
        self._timers = timers
        self._every = every_s
        self._lock = threading.Lock()
        self._running = False
        self._cancel: Cancel | None = None
        self.full_blinks = 0
        self._unsubscribe = behaviour.events.subscribe(
            self._on_event, MoveStarted.kind, MoveFinished.kind
        )

    def start(self) -> None:
        with self._lock:
            if self._running:
                raise EngineStateError("idle life already started")
            self._running = True
            self._arm_locked()

    def stop(self) -> None:
        with self._lock:
            self._running = False
            if self._cancel is not None:
                self._cancel()
                self._cancel = None
        self._unsubscribe()

    def _arm_locked(self) -> None:
        if self._cancel is not None:
            self._cancel()
        self._cancel = self._timers.call_later(self._every, self._due)

    def _on_event(self, event: Event) -> None:
        with self._lock:
            if self._running:
                self._arm_locked()  # every_s from the last move's start or end

    def _due(self) -> None:
        with self._lock:
            if not self._running:
                return
            self._arm_locked()  # the next one, whatever happens to this one
        if not self._engine.is_idle or self._behaviour.shutting_down:
            return  # a move runs: its MoveFinished arms the timer again
        try:
            self._behaviour.full_blink()
            self.full_blinks += 1
        except AnimaError as exc:  # e.g. estop: try again next period
            log.debug("full blink skipped: %s", exc)
