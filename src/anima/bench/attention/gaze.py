"""Capture → gaze command: how long from a frame's capture to the gaze offsets it moves.

The real pieces on the real clock: the 100 Hz motion loop on a simulated driver, a camera
thread delivering frames at ``fps`` (stamped with their capture time on the runtime clock, as
every source does), the vision thread with the real face detector (``vision.faces``, BlazeFace
with its face mesh by default), and attention (tracker, policy, aim) with its own thread. A
frame's latency is the runtime clock at the moment attention has set the engine's offsets for
it, less the frame's capture time: the detector's cost, the wait for the vision worker, the
projection, the tracker and the policy. The camera here delivers a frame the instant it is
stamped; a real camera adds its exposure and USB transfer before that (typically one to two
frame periods), which no software here can see or shorten.

The frames are scikit-image's public-domain astronaut (her head, halved to a ~47 px face) on a
grey 320×240 background, moving slowly left and right.
"""

from __future__ import annotations

import math
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from anima.attention.service import Attention
from anima.bench.measure import percentile, python_speed_ms
from anima.body import load_body
from anima.clock import Clock
from anima.config import MotionConfig
from anima.config.vision import AttentionConfig, VisionConfig
from anima.drivers.sim import SimDriver
from anima.motion.engine import MotionEngine
from anima.vision.faces import make_detector as detector_for
from anima.vision.pipeline import VisionPipeline
from anima.vision.seeing import SeeingProcess
from anima.vision.types import FaceDetector, FrameSink, Image, VideoFrame

TARGET_P95_MS = 150.0  # issue 32: capture → gaze command p95
WIDTH, HEIGHT = 320, 240
HEAD = (110, 10, 340, 250)  # the astronaut's head and shoulders in her 512×512 image (pixels)


@dataclass(frozen=True, kw_only=True)
class GazeLatency:
    """One run's figures (milliseconds of real time)."""

    detector: str
    process: bool  # the detector in a process of its own (vision.process)
    camera_there: bool  # the camera in that process too (SeeingProcess), as anima serve runs it
    seconds: float
    fps: float
    frames: int  # frames the camera delivered
    detected: int  # frames the detector ran on (the rest were dropped for a newer one)
    commands: int  # frames that ended in a gaze command toward a person
    p50_ms: float
    p95_ms: float
    max_ms: float
    detect_p50_ms: float | None
    detect_p95_ms: float | None
    missed_ticks: int  # the motion loop's missed deadlines meanwhile
    loop_p99_ms: float  # the loop's tick lateness p99 with vision running
    baseline_p99_ms: float | None  # the same loop alone just before (None: not measured)
    # the process's CPU with vision (its detector's process's included), over the baseline's,
    # in cores
    cpu_share: float
    # this machine's speed just before: 1e6 pure-Python additions (ms; CPU figures scale with it)
    python_ms: float = math.nan

    @property
    def passed(self) -> bool:
        return self.commands > 0 and self.p95_ms <= TARGET_P95_MS


def frames(count: int = 30) -> list[Image]:
    """``count`` frames of one face sweeping ±60 px around the centre."""
    from skimage import data

    x0, y0, x1, y1 = HEAD
    image: Image = data.astronaut()  # type: ignore[no-untyped-call]  # skimage: unannotated
    head = np.ascontiguousarray(image[y0:y1:2, x0:x1:2])  # 120 × 115
    h, w = head.shape[:2]
    out = []
    for k in range(count):
        frame = np.full((HEIGHT, WIDTH, 3), 128, dtype=np.uint8)
        cx = WIDTH // 2 + round(60 * math.sin(2 * math.pi * k / count))
        top, left = (HEIGHT - h) // 2, cx - w // 2
        frame[top : top + h, left : left + w] = head
        out.append(frame)
    return out


class Playback:
    """A camera (:class:`~anima.vision.types.Camera`) playing ``images`` in a loop at ``fps``
    on ``clock``, each frame stamped with the moment it is delivered."""

    name = "playback"

    def __init__(self, images: list[Image], fps: float, clock: Clock) -> None:
        self._images = images
        self._period = 1.0 / fps
        self._clock = clock
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.delivered = 0

    def start(self, sink: FrameSink) -> None:
        self._thread = threading.Thread(target=self._run, args=(sink,), daemon=True)
        self._thread.start()

    def _run(self, sink: FrameSink) -> None:
        deadline = self._clock.now()
        while self._clock.sleep_until(deadline, self._stop) and not self._stop.is_set():
            k = self.delivered
            image = self._images[k % len(self._images)]
            sink.frame(VideoFrame(image=image, t=self._clock.now(), index=k))
            self.delivered += 1
            deadline += self._period
        sink.end("stopped")

    def stop(self, timeout: float = 1.0) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)


def run_gaze_latency(
    seconds: float = 10.0,
    *,
    fps: float = 15.0,
    detector: str = "auto",
    make_detector: Callable[[VisionConfig], FaceDetector] | None = None,
    baseline: bool = True,
    process: bool = True,
    camera_there: bool = True,
) -> GazeLatency:
    """Run the whole chain for ``seconds`` of real time and measure each frame's latency;
    ``baseline``: first run the loop alone as long, for its lateness and CPU without vision;
    ``process``: the detector in a process of its own (``vision.process``), else in this one;
    ``camera_there`` (with ``process``, as ``anima serve`` runs a camera or a video): the camera
    in that process too, playing the frames from JPEG files
    (:class:`~anima.vision.seeing.SeeingProcess`), else a camera thread here handing them over."""
    speed = python_speed_ms()
    there = camera_there and process and make_detector is None
    with tempfile.TemporaryDirectory(prefix="anima-gaze-") as clip:
        if there:
            write_clip(Path(clip), math.ceil((seconds + 2.0) * fps))
        return _run(
            seconds,
            fps,
            detector=detector,
            make_detector=make_detector,
            baseline=baseline,
            process=process,
            clip=clip if there else None,
            speed=speed,
        )


def _run(
    seconds: float,
    fps: float,
    *,
    detector: str,
    make_detector: Callable[[VisionConfig], FaceDetector] | None,
    baseline: bool,
    process: bool,
    clip: str | None,
    speed: float,
) -> GazeLatency:
    vision = VisionConfig(fps=fps, faces=detector, process=process)
    body = load_body()
    driver = SimDriver(history=256)
    driver.connect()
    baseline_p99: float | None = None
    baseline_cpu = 0.0
    if baseline:  # the same loop alone first: its lateness and CPU without vision
        alone = MotionEngine(body, driver, config=MotionConfig())
        alone.start()
        began = time.process_time()
        time.sleep(seconds)
        baseline_cpu = (time.process_time() - began) / seconds
        baseline_p99 = alone.stats().period_error_p99_ms
        alone.stop()
    engine = MotionEngine(body, driver, config=MotionConfig())
    attention = Attention(engine, None, engine.clock, vision, AttentionConfig(idle_glances=False))
    pipeline: VisionPipeline | SeeingProcess
    if clip is not None:
        played = VisionConfig(source="video", video_in=clip, video_fps=fps, faces=detector)
        pipeline = SeeingProcess(played, attention.post_faces)
        name = pipeline.name
    else:
        made = (make_detector or detector_for)(vision)  # in its own process (vision.process)
        name = getattr(made, "name", detector)
        camera = Playback(frames(), fps, engine.clock)
        pipeline = VisionPipeline(camera, made, attention.post_faces, clock=engine.clock)
    engine.start()
    attention.start()
    missed = engine.stats().missed
    began = time.process_time()
    try:
        pipeline.start()
        time.sleep(seconds)
    finally:
        cpu = time.process_time() - began
        stats = pipeline.stats()  # before the stop: the detector's process's CPU so far
        cpu = (cpu + stats.detector_cpu_s) / seconds
        pipeline.stop(2.0)
        stats = pipeline.stats()
        attention.stop(2.0)
        loop = engine.stats()
        engine.stop()
        driver.disconnect()
    ms = [1000.0 * s for s in attention.latencies]
    return GazeLatency(
        detector=name,
        process=process and make_detector is None,
        camera_there=clip is not None,
        seconds=seconds,
        fps=fps,
        frames=stats.frames_in,
        detected=stats.processed,
        commands=len(ms),
        p50_ms=percentile(ms, 50),
        p95_ms=percentile(ms, 95),
        max_ms=max(ms) if ms else math.nan,
        detect_p50_ms=stats.detect_ms_p50,
        detect_p95_ms=stats.detect_ms_p95,
        missed_ticks=loop.missed - missed,
        loop_p99_ms=loop.period_error_p99_ms,
        baseline_p99_ms=baseline_p99,
        cpu_share=cpu - baseline_cpu,
        python_ms=speed,
    )


def where(r: GazeLatency) -> str:
    """Where the detector (and the camera) ran, for the report."""
    if r.camera_there:
        return "in the vision process with the camera"
    return "its own process, the camera here" if r.process else "in this process"


def write_clip(folder: Path, count: int) -> None:
    """:func:`frames` as ``count`` JPEG files in ``folder`` (the sweep repeated), in name order:
    decoded as a webcam's MJPG frames are (a PNG costs several times more to decode)."""
    from anima.vision.sources.opencv import load_cv2

    cv2 = load_cv2()
    images = [cv2.cvtColor(image, cv2.COLOR_RGB2BGR) for image in frames()]
    for i in range(count):
        path = str(folder / f"{i:05d}.jpg")
        cv2.imwrite(path, images[i % len(images)], [cv2.IMWRITE_JPEG_QUALITY, 90])


def report_lines(r: GazeLatency) -> list[str]:
    verdict = "ok" if r.passed else "OVER"
    detect = (
        "n/a"
        if r.detect_p50_ms is None or r.detect_p95_ms is None
        else f"{r.detect_p50_ms:.1f}/{r.detect_p95_ms:.1f} ms"
    )
    return [
        f"capture → gaze command ({r.detector}, {r.fps:g} fps, {r.seconds:g} s): "
        f"p50 {r.p50_ms:.1f} ms, p95 {r.p95_ms:.1f} ms, max {r.max_ms:.1f} ms "
        f"[target p95 ≤ {TARGET_P95_MS:g} ms: {verdict}]",
        f"  frames {r.frames}, detected {r.detected}, commands {r.commands}; "
        f"detector ({where(r)}) p50/p95 "
        f"{detect}; motion loop missed {r.missed_ticks} ticks",
        f"  loop lateness p99 {r.loop_p99_ms:.3f} ms with vision"
        + (
            ""
            if r.baseline_p99_ms is None
            else f", {r.baseline_p99_ms:.3f} ms alone (target: within 10 %)"
        )
        + f"; vision's CPU {r.cpu_share:.1%} of one core (target ≤ 15 %)",
        f"  this machine's speed meanwhile: 1e6 Python additions in {r.python_ms:.0f} ms (CPU "
        "figures scale with it; docs/attention.md)",
    ]


def print_report(r: GazeLatency, out: Callable[[str], None] = print) -> None:
    for line in report_lines(r):
        out(line)
