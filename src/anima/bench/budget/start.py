"""Start → first tick of ``anima serve`` (defaults), over several starts.

Each start is timed from just before the spawn to the first-tick line (``anima moving:``, or
``anima ready`` where there is none: :mod:`anima.bench.budget.servers`) and to ``anima ready``;
then its first status line (``serve.status_interval_s`` after the start finished: 5 s, 1 s in
a quick run) gives the
deadlines missed from the first tick on and the worst period error so far — the loop's health
while the rest loaded.
"""

from __future__ import annotations

import importlib.util
import os
import time
from dataclasses import dataclass
from pathlib import Path

from anima.bench.budget.servers import Started, start_serve, stop_serve, wait_started
from anima.bench.serve.serve import _STATUS
from anima.testing.serve import ServeProcess

# modules `anima serve` imports after its first tick, among the largest: without their bytecode
# cached (PYTHONDONTWRITEBYTECODE, and a venv made for testing, which make test compiles only as
# the tests import), each start compiles them while the loop runs, and a compile holds the
# interpreter: 3-5 ticks missed a start on 2026-12-05, against 0-1 with them compiled
SAMPLE_MODULES = (
    "anima.runtime",
    "fastapi.routing",
    "pydantic._internal._generate_schema",
    "paho.mqtt.client",
    "anyio._backends._asyncio",
)
START_TIMEOUT_S = 60.0
STATUS_TIMEOUT_S = 30.0


@dataclass(frozen=True, kw_only=True)
class Start:
    started: Started
    missed: int  # deadlines missed from the first tick to the first status line
    period_error_max_ms: float  # worst |tick start − deadline| in that span
    exit_code: int


def uncached_bytecode(modules: tuple[str, ...] = SAMPLE_MODULES) -> list[str]:
    """Which of ``modules`` have no bytecode cached beside their source (found, not imported)."""
    missing = []
    for name in modules:
        try:
            spec = importlib.util.find_spec(name)
        except (ImportError, ValueError):
            spec = None
        if spec is None or spec.cached is None:
            continue  # not installed, or not from a source file: nothing to compile
        if not os.path.exists(spec.cached):
            missing.append(name)
    return missing


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
