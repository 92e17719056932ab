"""Start → first tick of ``anima serve`` (defaults), over several starts.

Each start is timed from just before the spawn to the first-tick line (``anima moving:``, or
``anima ready`` where there is none: :mod:`anima.bench.budget.servers`) and to ``anima ready``;
then its first status line (``serve.status_interval_s`` after the start finished: 5 s, 1 s in
a quick run) gives the
deadlines missed from the first tick on and the worst period error so far — the loop's health
while the rest loaded.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

from anima.bench.budget.servers import Started, start_serve, stop_serve, wait_started
from anima.bench.serve.serve import _STATUS
from anima.testing.serve import ServeProcess

START_TIMEOUT_S = 60.0
STATUS_TIMEOUT_S = 30.0


@dataclass(frozen=True, kw_only=True)
class Start:
    started: Started
    missed: int  # deadlines missed from the first tick to the first status line
    period_error_max_ms: float  # worst |tick start − deadline| in that span
    exit_code: int


def first_status(server: ServeProcess) -> tuple[int, float]:
    """The deadlines missed and the worst period error (ms) of the first status line it
    printed (waited for, or read from what it printed since the last line read)."""
    line = server.wait_for(_STATUS.pattern, STATUS_TIMEOUT_S)
    status = _STATUS.search(line)
    assert status is not None  # the line was waited for by this pattern
    return int(status["missed"]), float(status["max"])


def one_start(workdir: Path, status_interval_s: float | None = None) -> Start:
    spawned = time.monotonic()
    server = start_serve(workdir, status_interval_s=status_interval_s)
    try:
        started = wait_started(server, spawned, START_TIMEOUT_S)
        missed, worst_ms = first_status(server)
    finally:
        code = stop_serve(server)
    return Start(started=started, missed=missed, period_error_max_ms=worst_ms, exit_code=code)


def starts(workdir: Path, n: int, status_interval_s: float | None = None) -> list[Start]:
    return [one_start(workdir, status_interval_s) for _ in range(n)]
