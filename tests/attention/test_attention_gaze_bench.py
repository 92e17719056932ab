"""The capture → gaze command bench runs the whole chain on the real clock with the real
detector: every frame it detects a face in ends in a gaze command, whose latency includes the
detector's time. (The figure against its target is the bench's to print, not a test's.)"""

from __future__ import annotations

import pytest

from anima.bench.attention.gaze import report_lines, run_gaze_latency
from anima.bench.attention.lateness import report_lines as lateness_report
from anima.bench.attention.lateness import run_lateness_ab
from anima.config import MotionConfig

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
    assert r.process  # the runtime's default: the detector in its own process
    assert r.camera_there  # and with a camera or a video, the camera there too
    lines = report_lines(r)
    assert lines[0].startswith("capture → gaze command (blazeface")
    assert "detector (in the vision process with the camera)" in lines[1]
    assert "ms alone (target: within 10 %)" in lines[2]


def test_the_interleaved_lateness_bench_runs_no_vision_thread_in_its_alone_blocks() -> None:
    """The loop with vision and without, in alternating blocks of one run (A B B A): vision's
    threads run only in the vision blocks (the detector works there) and have all ended by the
    last block without, every tick of both is counted, and the report says both, with the
    ratio's interval."""
    r = run_lateness_ab(blocks=2, block_s=0.6, fps=15.0, detector="blazeface")
    assert r.frames_detected >= 8  # 15 fps for 2 × 0.6 s: the detector ran in both
    assert r.vision_threads == 2  # the camera's and the vision pipeline's (attention has none)
    assert r.vision_threads_alone == 0  # none of them left in a block without
    assert r.ticks_alone >= 100  # 2 × 0.6 s at 100 Hz each
    assert r.ticks_vision >= 100
    assert r.alone_p99_ms >= r.alone_p50_ms >= 0.0
    assert r.vision_p99_ms >= r.vision_p50_ms >= 0.0
    assert len(r.pair_ratios) == 2
    assert r.ratio_low <= r.ratio_high
    assert r.switch_interval_ms == MotionConfig().switch_interval_ms
    line = lateness_report(r)[0]
    assert "with vision vs" in line
    assert "95 % interval" in line
    assert "target ≤ 1.10×" in line


def test_the_lateness_bench_runs_the_detector_in_the_loops_process_when_asked() -> None:
    """The comparison docs/attention.md shows: vision.process false, the detector on the vision
    thread in the loop's process."""
    r = run_lateness_ab(blocks=1, block_s=0.6, fps=15.0, detector="blazeface", process=False)
    assert r.process is False
    assert r.frames_detected >= 4
    assert "detector in the loop’s process" in lateness_report(r)[0]


def test_the_start_bench_starts_fresh_runtimes_with_the_camera_there_and_here() -> None:
    """Each start is a fresh process seeing the whole video; the vision process keeps OpenCV out
    of the runtime's, the old way imports it there (the missed ticks are the bench's figure)."""
    from anima.bench.attention.start import report_lines as start_report
    from anima.bench.attention.start import run_starts

    there, here = run_starts(1)
    assert (there.condition, here.condition) == ("vision process", "runtime process")
    # the video's 30 frames, a few dropped when a loaded machine detects slower than 10 fps
    assert 20 <= there.seen[0] <= 30
    assert 20 <= here.seen[0] <= 30
    assert there.opencv_here == [False]
    assert here.opencv_here == [True]
    assert len(there.missed) == len(here.missed) == 1
    lines = start_report([there, here])
    assert "camera in the vision process" in lines[1]
    assert "OpenCV imported by the runtime in 0 of 1" in lines[1]
