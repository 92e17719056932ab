"""``anima bench serve``: start `anima serve` as a user would; time to first tick, idle RSS, and
the loop's health while everything else starts (voices load, broker and web server come up)."""

from __future__ import annotations

import re
import time
from dataclasses import dataclass

from anima.bench.measure import rss_mb
from anima.testing.serve import ServeProcess

MOVING = "anima moving"  # printed at the first tick, before the rest loads
READY = "anima ready"  # printed once every part has started
# serve's status line (cli.status.status_line), every 5 s; `missed` counts since the start
_STATUS = re.compile(r"period error p99 \S+ ms max (?P<max>[\d.]+) ms \| missed (?P<missed>\d+)")


@dataclass(frozen=True, kw_only=True)
class ServeBenchResult:
    start_to_first_tick_s: float  # process spawn → the "moving" line (printed at the first tick)
    start_to_ready_s: float  # process spawn → the "ready" line (voices, doors, agent started)
    rss_idle_mb: float  # resident memory after idling
    idle_s: float  # how long it idled before the reading
    exit_code: int  # after SIGTERM (0 = eased to rest and exited cleanly)
    exit_s: float  # SIGTERM → process gone
    missed_since_start: int | None  # deadlines missed from the first tick to the last status line
    period_error_max_ms: float | None  # worst |period error| in that status line's window


def run_serve_bench(idle_s: float = 5.0, timeout: float = 20.0) -> ServeBenchResult:
    t0 = time.monotonic()
    server = ServeProcess()
    try:
        server.wait_for(MOVING, timeout)
        moving = time.monotonic() - t0
        server.wait_for(READY, timeout)
        ready = time.monotonic() - t0
        time.sleep(idle_s)
        rss = rss_mb(server.pid)
        t1 = time.monotonic()
        code = server.stop(timeout)  # SIGTERM, then what it printed on the way out
        exit_s = time.monotonic() - t1
    finally:
        if server.proc.poll() is None:
            server.proc.kill()
            server.proc.wait()
    status = [m for line in server.lines if (m := _STATUS.search(line))]
    last = status[-1] if status else None
    return ServeBenchResult(
        start_to_first_tick_s=moving,
        start_to_ready_s=ready,
        rss_idle_mb=rss,
        idle_s=idle_s,
        exit_code=code,
        exit_s=exit_s,
        missed_since_start=int(last["missed"]) if last else None,
        period_error_max_ms=float(last["max"]) if last else None,
    )
