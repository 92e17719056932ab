"""The dashboard benchmark runs and reports a live stream (figures are the benchmark's job)."""

from __future__ import annotations

import pytest

from anima.bench.doors.web import run_web_bench

pytestmark = pytest.mark.integration


def test_web_bench_reports_updates_and_the_loop() -> None:
    r = run_web_bench(clients=2, seconds=1.0)
    assert r.clients == 2
    assert r.updates_per_s_min >= 20  # configured 30/s; loose for a loaded machine
    assert r.loop_rate_hz > 50
    assert r.cpu_clients_pct >= 0
