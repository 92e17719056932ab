"""A Reachy Mini link with no daemon: it reports back the target it was sent ``behind`` targets
ago, for tests of the driver's feedback and of the dashboard's measured ghost."""

from __future__ import annotations

import threading
import time

from anima.drivers.reachy_mini import Measured, Target


class EchoLink:
    """:class:`~anima.drivers.reachy_mini.ReachyLink` whose robot lags ``behind`` targets."""

    def __init__(self, behind: int = 0) -> None:
        self.behind = behind
        self.targets: list[Target] = []
        self._lock = threading.Lock()

    def set_target(self, target: Target) -> None:
        with self._lock:
            self.targets.append(target)
            del self.targets[: -self.behind - 1]  # only what a read can still report

    def read(self) -> Measured | None:
        with self._lock:
            if len(self.targets) <= self.behind:
                return None
            t = self.targets[-1 - self.behind]
        return Measured(time.monotonic(), t.head, t.antennas, t.body_yaw)

    def close(self) -> None:
        pass
