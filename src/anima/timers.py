"""Callbacks at a time on the injected clock: idle life's full blink, the conversation's phases.

One thread (``anima-timers``) runs them one at a time, in time order, waiting on the clock in
between. A runtime stepped by a test (:class:`anima.testing.FakeTimeRobot`) starts no thread:
it calls :meth:`Timers.run_due` after each tick, so a callback due at 8.000 s runs in the tick
of 8.000 s, exactly. A callback that raises is logged; the others still run.
"""

from __future__ import annotations

import heapq
import itertools
import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass, field

from anima.clock import Clock
from anima.errors import EngineStateError

log = logging.getLogger(__name__)

Cancel = Callable[[], None]


@dataclass(order=True)
class _Entry:
    due: float
    seq: int
    fn: Callable[[], None] = field(compare=False)
    canceled: bool = field(default=False, compare=False)


class Timers:
    """``call_later(seconds, fn)`` on one clock; returns a cancel that is safe to call twice."""

    def __init__(self, clock: Clock) -> None:
        self.clock = clock
        self._heap: list[_Entry] = []
        self._seq = itertools.count()
        self._lock = threading.Lock()
        self._wake = threading.Event()  # a new earliest entry, or stop
        self._running = False
        self._thread: threading.Thread | None = None

    def call_later(self, seconds: float, fn: Callable[[], None]) -> Cancel:
        return self.call_at(self.clock.now() + max(0.0, seconds), fn)

    def call_at(self, due: float, fn: Callable[[], None]) -> Cancel:
        entry = _Entry(due, next(self._seq), fn)
        with self._lock:
            heapq.heappush(self._heap, entry)
            if self._heap[0] is entry:
                self._wake.set()

        def cancel() -> None:
            entry.canceled = True

        return cancel

    @property
    def pending(self) -> int:
        """Callbacks waiting (canceled ones not counted)."""
        with self._lock:
            return sum(1 for e in self._heap if not e.canceled)

    def next_due(self) -> float | None:
        """When the earliest callback is due (None: none waits)."""
        with self._lock:
            self._drop_canceled()
            return self._heap[0].due if self._heap else None

    def run_due(self) -> int:
        """Run, on this thread, every callback due by the clock's now; returns how many ran."""
        ran = 0
        while True:
            now = self.clock.now()
            with self._lock:
                self._drop_canceled()
                if not self._heap or self._heap[0].due > now:
                    return ran
                entry = heapq.heappop(self._heap)
            try:
                entry.fn()
            except Exception:
                log.exception("timer callback %r failed", entry.fn)
            ran += 1

    def _drop_canceled(self) -> None:
        while self._heap and self._heap[0].canceled:
            heapq.heappop(self._heap)

    # ------------------------------------------------------------------ the thread
    def start(self) -> None:
        if self._thread is not None:
            raise EngineStateError("timers already started")
        self._running = True
        self._thread = threading.Thread(target=self._run, name="anima-timers", daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 1.0) -> None:
        """Stop the thread (callbacks not yet due are dropped)."""
        thread = self._thread
        self._running = False
        self._wake.set()
        if thread is not None:
            thread.join(timeout)
        self._thread = None
        with self._lock:
            self._heap.clear()

    def _run(self) -> None:
        while self._running:
            self.run_due()
            due = self.next_due()
            self._wake.clear()
            if due is not None and self.next_due() != due:
                continue  # an earlier one came in between
            timeout = None if due is None else due - self.clock.now()
            if timeout is None or timeout > 0:
                self.clock.wait(self._wake, timeout)
