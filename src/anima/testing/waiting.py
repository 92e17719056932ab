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


def process_gone(pid: int, within: float = 10.0) -> bool:
    """True once no process ``pid`` runs (a zombie awaiting its parent counts as gone), False
    after ``within`` seconds: waits on the process's pidfd, which turns readable as it ends (no
    polling)."""
    import os
    import select

    try:
        fd = os.pidfd_open(pid)
    except ProcessLookupError:
        return True  # already ended and reaped
    try:
        readable, _, _ = select.select([fd], [], [], within)
        return bool(readable)
    finally:
        os.close(fd)
