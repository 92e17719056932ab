"""``anima bench mcp``, a small slice: it measures what it names (figures, not timings, are
checked: a frame found for the calls, a hold for each cancel)."""

from __future__ import annotations

import math

import pytest

from anima.bench.doors.mcp import figures_lines, run_mcp_bench

pytestmark = pytest.mark.model


@pytest.mark.timeout(120)
def test_the_mcp_bench_measures_calls_and_cancels() -> None:
    f = run_mcp_bench(calls=8, cancels=2)
    assert f.calls == 8
    assert f.measured >= 4  # most calls' reflecting frame is found
    assert 0 < f.frame_p50_ms < f.round_trip_p99_ms + 1000
    assert f.cancels == 2
    assert math.isfinite(f.held_max_ms)
    assert f.held_max_ms >= 0
    assert f.tools == 11  # the built-ins, run_plan, the stops, remember and forget
    assert f.tools_chars > 1000
    assert figures_lines(f)[0].startswith("tools                 : 11, ")
