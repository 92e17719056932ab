"""`anima bench hostile`, a small slice: the real `anima serve` survives a flood and a huge
planner reply, and the bench reads its figures (none is asserted: the benchmark reports).

One ask, not two: the agent speaks a turn's bounded reply at real time (~26 s of "Sure thing."),
so a second ask's turn only starts after it — 26 of the test's 46 s went to that wait."""

from __future__ import annotations

import pytest

from anima.bench.serve.hostile import run_hostile_bench
from anima.testing.mosquitto import find_mosquitto

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(find_mosquitto() is None, reason="needs Debian mosquitto"),
]


def test_a_flooded_serve_refuses_everything_still_answers_and_exits_cleanly() -> None:
    r = run_hostile_bench(
        flood_seconds=5.0, flood_messages=400, reply_bytes=200_000, asks=1, settle_s=1.0
    )
    assert r.published == 400
    # every unknown name is refused on the error topic, and the 400-digit numbers too
    assert r.refusals_sent >= 99  # a quarter of the flood, less the ask's slot
    assert r.refusals_received == r.refusals_sent
    assert r.errors_received >= r.refusals_sent + 200  # and the 400-digit look_at and posture
    # the door still answers after the flood: an estop is applied and a reset releases it
    assert r.estop_after_flood
    assert r.reset_after_flood
    # the request to the agent, made mid-flood, ended with the robot speaking its huge reply
    assert r.asks == 1
    assert r.planner_requests == 1
    assert r.turns_spoken == 1
    assert r.frames > 100  # the recording was read over the attack window
    assert r.refusal_p99_ms >= r.refusal_p50_ms > 0
    assert r.exit_code == 0
