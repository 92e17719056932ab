"""The capture → gaze command bench runs the whole chain on the real clock with the real
detector: every frame it detects a face in ends in a gaze command, whose latency includes the
detector's time. (The figure against its target is the bench's to print, not a test's.)"""

from __future__ import annotations

import pytest

from anima.bench.attention.gaze import report_lines, run_gaze_latency

pytestmark = pytest.mark.model


def test_each_detected_frame_ends_in_a_gaze_command() -> None:
    r = run_gaze_latency(2.0, fps=15.0, detector="blazeface")
    assert 25 <= r.frames <= 32  # 15 fps for 2 s, on the real clock
    assert r.commands >= 0.9 * r.detected > 0  # the astronaut is found in (nearly) every frame
    assert r.detect_p50_ms is not None
    assert r.p50_ms >= 0.9 * r.detect_p50_ms  # the detector's time is part of the latency
    assert r.max_ms >= r.p95_ms >= r.p50_ms > 0
    # the loop alone first, as long: its lateness and CPU are the baseline vision is held to
    assert r.baseline_p99_ms is not None
    assert r.baseline_p99_ms >= 0.0
    assert r.loop_p99_ms >= 0.0
    assert 0.0 < r.cpu_share < 2.0  # vision costs CPU, and at most both cores
    lines = report_lines(r)
    assert lines[0].startswith("capture → gaze command (blazeface")
    assert "ms alone (target: within 10 %)" in lines[2]
