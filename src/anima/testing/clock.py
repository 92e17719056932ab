"""A clock tests advance by hand, with an optional overshoot to play a late scheduler."""

from __future__ import annotations

import threading
from collections.abc import Callable

# how often a thread blocked in FakeClock.wait looks at its event (a threading.Event cannot
# wake the clock's condition; advance() wakes it at once)
EVENT_POLL_S = 0.002


class FakeClock:
    """``now()`` moves only when told. ``sleep_until(d)`` jumps to ``d + overshoot(d)``.

    ``overshoot`` returns how late a wait wakes (seconds); the default wakes exactly on time.
    Every wait is recorded in ``waits`` (the deadlines asked for), for exact scheduling tests.
    :meth:`wait` blocks another thread until its event is set or the test has advanced the
    clock past its timeout: on this clock, seconds pass only when the test says so.
    """

    def __init__(
        self, start: float = 1000.0, overshoot: Callable[[float], float] | None = None
    ) -> None:
        self._now = start
        self._overshoot = overshoot or (lambda _deadline: 0.0)
        self._cond = threading.Condition()
        self._waiting = 0
        self.waits: list[float] = []

    def now(self) -> float:
        with self._cond:
            return self._now

    def advance(self, seconds: float) -> None:
        if seconds < 0:
            raise ValueError("a monotonic clock cannot go back")
        with self._cond:
            self._now += seconds
            self._cond.notify_all()

    def sleep_until(self, deadline: float) -> None:
        with self._cond:
            self.waits.append(deadline)
            self._now = max(self._now, deadline)
            self._now += max(0.0, self._overshoot(deadline))
            self._cond.notify_all()

    def wait(self, event: threading.Event, timeout: float | None = None) -> bool:
        with self._cond:
            deadline = None if timeout is None else self._now + max(0.0, timeout)
            self._waiting += 1
            try:
                while not event.is_set():
                    if deadline is not None and self._now >= deadline:
                        return False
                    self._cond.wait(EVENT_POLL_S)
                return True
            finally:
                self._waiting -= 1

    @property
    def waiting(self) -> int:
        """How many threads are blocked in :meth:`wait` now."""
        with self._cond:
            return self._waiting
