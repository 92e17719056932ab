"""`anima bench serve` reads the figures from a real `anima serve` subprocess."""

from __future__ import annotations

import pytest

from anima.bench.serve.serve import run_serve_bench

pytestmark = pytest.mark.integration


def test_serve_bench_reads_start_memory_exit_and_the_loop_health(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # the default serve, minus fixed ports another process on this machine may hold
    monkeypatch.setenv("ANIMA_WEB__PORT", "0")
    monkeypatch.setenv("ANIMA_MQTT__ENABLED", "false")
    r = run_serve_bench(idle_s=5.5)
    assert 0 < r.start_to_first_tick_s < 20
    assert r.start_to_first_tick_s <= r.start_to_ready_s < 30  # the first tick, then the rest
    assert r.rss_idle_mb > 20
    assert r.exit_code == 0
    # the status line after 5 s was found and parsed (no figure is asserted: benchmarks report)
    assert r.missed_since_start is not None
    assert r.period_error_max_ms is not None
    assert r.period_error_max_ms >= 0
