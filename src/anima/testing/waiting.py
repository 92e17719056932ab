"""Waiting in tests for something another thread makes true, bounded in time."""

from __future__ import annotations

import time
from collections.abc import Callable


def eventually(predicate: Callable[[], object], timeout: float = 5.0, every: float = 0.01) -> bool:
    """Call ``predicate`` every ``every`` seconds until it is truthy (True) or ``timeout``
    seconds have passed (False). Use as ``assert eventually(lambda: robot.state().move is None)``.
    """
    end = time.monotonic() + timeout
    while True:
        if predicate():
            return True
        if time.monotonic() >= end:
            return False
        time.sleep(every)
