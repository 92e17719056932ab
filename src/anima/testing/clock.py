"""A clock tests advance by hand, with an optional overshoot to play a late scheduler."""

from __future__ import annotations

import threading
from collections.abc import Callable


class FakeClock:
    """``now()`` moves only when told. ``sleep_until(d)`` jumps to ``d + overshoot(d)``.

    ``overshoot`` returns how late a wait wakes (seconds); the default wakes exactly on time.
    Every wait is recorded in ``waits`` (the deadlines asked for), for exact scheduling tests.
    """

    def __init__(
        self, start: float = 1000.0, overshoot: Callable[[float], float] | None = None
    ) -> None:
        self._now = start
        self._overshoot = overshoot or (lambda _deadline: 0.0)
        self._lock = threading.Lock()
        self.waits: list[float] = []

    def now(self) -> float:
        with self._lock:
            return self._now

    def advance(self, seconds: float) -> None:
        if seconds < 0:
            raise ValueError("a monotonic clock cannot go back")
        with self._lock:
            self._now += seconds

    def sleep_until(self, deadline: float) -> None:
        with self._lock:
            self.waits.append(deadline)
            self._now = max(self._now, deadline)
            self._now += max(0.0, self._overshoot(deadline))
