"""The vision thread: a camera's newest frame to a face detector, its faces to a callback; a
slow detector drops frames (never queues them), failures are counted and survived, start and
stop are idempotent with bounded waits, and the counters read as one frozen snapshot.

The detector is a real one written here: it finds the one bright square of a frame."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import cv2
import numpy as np
import pytest

from anima.errors import ConfigError, EngineStateError
from anima.testing import FakeClock
from anima.vision.pipeline import VisionPipeline, VisionStats, percentile
from anima.vision.sources import VideoPlayer
from anima.vision.types import Box, Face, FrameSink, Image, VideoFrame

pytestmark = pytest.mark.fast

WAIT_S = 10.0  # real seconds: only a hang reaches this
W, H = 64, 48


class BrightSquare:
    """A face detector for white squares on black: the box of the pixels over 200."""

    name = "bright-square"

    def __init__(self) -> None:
        self.closed = 0
        self.gate: threading.Event | None = None  # when set up: each detect waits for it
        self.entered = threading.Event()
        self.fail_on: set[int] = set()  # the squares' left edges (pixels) that raise

    def detect(self, image: Image) -> list[Face]:
        self.entered.set()
        if self.gate is not None:
            assert self.gate.wait(WAIT_S)
        ys, xs = np.nonzero(image.min(axis=2) > 200)
        if xs.size == 0:
            return []
        if int(xs.min()) in self.fail_on:
            raise ValueError(f"no face at x={int(xs.min())}")
        h, w = image.shape[:2]
        box = Box(xs.min() / w, ys.min() / h, (xs.max() + 1) / w, (ys.max() + 1) / h)
        return [Face(box=box, score=1.0)]

    def close(self) -> None:
        self.closed += 1


class HandCamera:
    """A camera the test hands frames to (the pipeline is its sink)."""

    name = "hand"

    def __init__(self) -> None:
        self.sink: FrameSink | None = None

    def start(self, sink: FrameSink) -> None:
        self.sink = sink

    def stop(self, timeout: float = 1.0) -> None:
        if self.sink is not None:
            self.sink.end("stopped")
            self.sink = None

    def give(self, index: int, x: int) -> None:
        assert self.sink is not None
        self.sink.frame(VideoFrame(image=square(x), t=1000.0 + index / 15, index=index))


def square(x: int) -> Image:
    image = np.zeros((H, W, 3), np.uint8)
    image[10:26, x : x + 16] = 255
    return image


class Seen:
    """The callback: what the tracker would be handed."""

    def __init__(self) -> None:
        self.calls: list[tuple[int, list[Face]]] = []
        self.ends: list[str] = []
        self.changed = threading.Condition()

    def __call__(self, frame: VideoFrame, faces: list[Face]) -> None:
        with self.changed:
            self.calls.append((frame.index, faces))
            self.changed.notify_all()

    def on_end(self, reason: str) -> None:
        self.ends.append(reason)

    def wait_calls(self, count: int) -> None:
        with self.changed:
            assert self.changed.wait_for(lambda: len(self.calls) >= count, WAIT_S)


@pytest.fixture
def clock() -> Iterator[FakeClock]:
    with FakeClock(autojump=True) as c:
        yield c


@pytest.fixture
def frames(tmp_path: Path) -> Path:
    """Ten frames of a square moving right 4 pixels a frame."""
    for i in range(10):
        bgr = cv2.cvtColor(square(4 * i), cv2.COLOR_RGB2BGR)
        assert cv2.imwrite(str(tmp_path / f"{i:02d}.png"), bgr)
    return tmp_path


def test_a_video_through_the_detector_to_the_callback_frame_by_frame(
    frames: Path, clock: FakeClock
) -> None:
    detector, seen = BrightSquare(), Seen()
    camera = VideoPlayer(str(frames), clock=clock, fps=None, default_fps=15, width=W)
    pipeline = VisionPipeline(camera, detector, seen, clock=clock, on_end=seen.on_end)
    pipeline.start()
    assert pipeline.wait_ended(WAIT_S)
    stats = pipeline.stats()
    pipeline.stop()
    # on autojump the clock waits for each detection: every frame is seen, in order
    assert [i for i, _ in seen.calls] == list(range(10))
    centres = [faces[0].box.center for _, faces in seen.calls]
    assert [round(x * W) for x, _ in centres] == [8 + 4 * i for i in range(10)]
    assert {round(y * H) for _, y in centres} == {18}
    assert (stats.frames_in, stats.processed, stats.dropped, stats.errors) == (10, 10, 0, 0)
    assert stats.ended == "end of video"
    assert seen.ends == ["end of video"]
    assert stats.detect_ms_p50 is not None
    assert stats.detect_ms_p95 is not None
    assert 0 < stats.detect_ms_p50 <= stats.detect_ms_p95 < 1000
    assert stats.cpu_s > 0
    assert detector.closed == 1  # the pipeline owns its detector


def test_a_slow_detector_drops_frames_and_never_queues_them(clock: FakeClock) -> None:
    detector, seen, camera = BrightSquare(), Seen(), HandCamera()
    detector.gate = threading.Event()
    pipeline = VisionPipeline(camera, detector, seen, clock=clock)
    pipeline.start()
    camera.give(0, x=0)
    assert detector.entered.wait(WAIT_S)  # frame 0 is being detected: the detector is busy
    for i in (1, 2, 3):
        camera.give(i, x=4 * i)  # each replaces the one waiting
    assert pipeline.stats().dropped == 2
    detector.gate.set()
    seen.wait_calls(2)
    pipeline.stop()
    assert [i for i, _ in seen.calls] == [0, 3]  # the newest, never 1 or 2
    stats = pipeline.stats()
    assert (stats.frames_in, stats.processed, stats.dropped) == (4, 2, 2)
    assert stats.ended == "stopped"


def test_failures_are_counted_and_the_thread_goes_on(
    frames: Path, clock: FakeClock, caplog: pytest.LogCaptureFixture
) -> None:
    detector = BrightSquare()
    detector.fail_on = {4}  # frame 1's square
    calls: list[int] = []

    def tracker(frame: VideoFrame, faces: list[Face]) -> None:
        calls.append(frame.index)
        if frame.index == 2:
            raise RuntimeError("tracker bug")

    camera = VideoPlayer(str(frames), clock=clock, fps=None, default_fps=15, width=W)
    pipeline = VisionPipeline(camera, detector, tracker, clock=clock)
    with caplog.at_level(logging.ERROR, logger="anima.vision.pipeline"):
        pipeline.start()
        assert pipeline.wait_ended(WAIT_S)
        pipeline.stop()
    assert calls == [0, 2, 3, 4, 5, 6, 7, 8, 9]  # none for frame 1; on after frame 2's raise
    stats = pipeline.stats()
    assert (stats.processed, stats.errors, stats.ended) == (9, 2, "end of video")
    assert "the detector failed" in caplog.text
    assert "no face at x=4" in caplog.text
    assert "on_faces failed" in caplog.text


def test_start_and_stop_are_idempotent_and_a_stopped_pipeline_stays_stopped(
    clock: FakeClock,
) -> None:
    detector, camera = BrightSquare(), HandCamera()
    pipeline = VisionPipeline(camera, detector, Seen(), clock=clock)
    pipeline.stop()  # before start: nothing
    pipeline.start()
    pipeline.start()
    pipeline.stop()
    pipeline.stop()
    assert detector.closed == 1
    assert pipeline.wait_ended(0)
    with pytest.raises(EngineStateError, match="does not start again"):
        pipeline.start()


def test_a_camera_that_fails_to_start_leaves_nothing_running(
    tmp_path: Path, clock: FakeClock
) -> None:
    detector = BrightSquare()
    camera = VideoPlayer(str(tmp_path / "none.mp4"), clock=clock, fps=None, default_fps=15, width=W)
    pipeline = VisionPipeline(camera, detector, Seen(), clock=clock)
    with pytest.raises(ConfigError, match=r"none\.mp4"):
        pipeline.start()
    assert pipeline.wait_ended(WAIT_S)
    assert detector.closed == 1


def test_the_counters_are_a_frozen_snapshot(clock: FakeClock) -> None:
    pipeline = VisionPipeline(HandCamera(), BrightSquare(), Seen(), clock=clock)
    stats = pipeline.stats()
    assert stats == VisionStats(
        frames_in=0,
        processed=0,
        dropped=0,
        errors=0,
        detect_ms_p50=None,
        detect_ms_p95=None,
        cpu_s=0.0,
        detector_cpu_s=0.0,
        ended=None,
    )
    with pytest.raises(AttributeError):
        stats.processed = 1  # type: ignore[misc]


@pytest.mark.integration
def test_a_hung_detector_does_not_hang_the_stop(caplog: pytest.LogCaptureFixture) -> None:
    """A bounded join on the real clock: the stop returns after its timeout, said so."""
    from anima.clock import MonotonicClock

    detector, camera = BrightSquare(), HandCamera()
    detector.gate = threading.Event()
    pipeline = VisionPipeline(camera, detector, Seen(), clock=MonotonicClock())
    pipeline.start()
    camera.give(0, x=0)
    assert detector.entered.wait(WAIT_S)
    began = time.monotonic()
    with caplog.at_level(logging.WARNING, logger="anima.vision.pipeline"):
        pipeline.stop(timeout=0.2)
    took = time.monotonic() - began
    assert detector.closed == 0  # not freed under a detection still running
    detector.gate.set()  # let it go
    assert pipeline.wait_ended(WAIT_S)
    assert detector.closed == 1  # by the worker, as it ended
    assert 0.2 <= took < 2.0
    assert "did not finish within 0.2 s" in caplog.text


@pytest.mark.parametrize("count", [1, 2, 7, 150])
def test_the_detector_times_percentiles_are_numpys(count: int) -> None:
    """The stats' p50 and p95 interpolate as numpy's default, in pure Python (numpy's took
    0.3 ms a frame in the vision process); none without a sample."""
    rng = np.random.default_rng(count)
    values = rng.uniform(1.0, 20.0, count).tolist()
    for q in (50, 95):
        assert percentile(sorted(values), q) == pytest.approx(float(np.percentile(values, q)))
    assert percentile([], 50) is None
