"""Idle life: the full blink Nadine gives every few seconds when nothing else moves.

Natural blinking (random intervals) is the engine's ``Blink`` idle layer. This adds the seed's
periodic full blink: after ``every_s`` seconds with no primary move running or queued, a full
blink (``blink`` while a gaze target is latched, else ``LOOKUPPostureDefaultBlink``). It waits
on a condition woken by move events, never polls.
"""

from __future__ import annotations

import logging
import threading
import time

from anima.behaviour.controller import Behaviour
from anima.errors import AnimaError, EngineStateError
from anima.events import Event, MoveFinished, MoveStarted

log = logging.getLogger(__name__)


class IdleLife:
    def __init__(self, behaviour: Behaviour, *, every_s: float = 8.0) -> None:
        self._behaviour = behaviour
        self._engine = behaviour.engine
        self._every = every_s
        self._cond = threading.Condition()
        self._running = False
        self._last_activity = time.monotonic()
        self._thread: threading.Thread | None = None
        self.full_blinks = 0
        self._unsubscribe = behaviour.events.subscribe(
            self._on_event, MoveStarted.kind, MoveFinished.kind
        )

    def start(self) -> None:
        if self._thread is not None:
            raise EngineStateError("idle life already started")
        self._running = True
        self._last_activity = time.monotonic()
        self._thread = threading.Thread(target=self._run, name="anima-idle-life", daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 1.0) -> None:
        thread = self._thread
        if thread is None:
            return
        with self._cond:
            self._running = False
            self._cond.notify_all()
        thread.join(timeout)
        self._thread = None
        self._unsubscribe()

    def _on_event(self, event: Event) -> None:
        with self._cond:
            self._last_activity = time.monotonic()
            self._cond.notify_all()

    def _run(self) -> None:
        with self._cond:
            while self._running:
                if not self._engine.is_idle or self._behaviour.shutting_down:
                    # a move is running: its MoveFinished wakes us (the timeout only guards
                    # against a shutdown flag that changes without an event)
                    self._cond.wait(self._every)
                    continue
                remaining = self._last_activity + self._every - time.monotonic()
                if remaining > 0:
                    self._cond.wait(remaining)
                    continue
                self._last_activity = time.monotonic()
                self._cond.release()
                try:
                    self._behaviour.full_blink()
                    self.full_blinks += 1
                except AnimaError as exc:  # e.g. estop: try again next period
                    log.debug("full blink skipped: %s", exc)
                finally:
                    self._cond.acquire()
