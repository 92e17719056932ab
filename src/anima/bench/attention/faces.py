"""Faces on one core: what BlazeFace, the face mesh and the Haar cascade cost on a 320×240 frame,
and what they find on a composited set (:func:`~anima.bench.attention.face_scenes.measured_set`,
never used to tune anything).

Everything runs pinned to one CPU (``os.sched_setaffinity`` on this thread, restored after) and
with OpenCV's own thread pool set to one thread (restored after), so a figure is what one core
pays. Times are wall-clock per call, in milliseconds; the CPU time of the whole run is reported
beside them (equal when nothing else ran on the core).

A face is **found** when a detected box's centre lies inside the true box and its height is
within half to twice the true height; a detection that matches no face is a **false** one.
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import partial

import numpy as np

from anima.bench.attention.face_scenes import Scene, measured_set
from anima.bench.measure import percentile, python_speed_ms
from anima.config.vision import VisionConfig
from anima.vision.types import Box, Face

FPS = 15.0  # the frame rate a share of one core is given for (vision.fps's default)


@dataclass(frozen=True)
class Cost:
    """Milliseconds per call."""

    p50_ms: float
    p95_ms: float
    calls: int


@dataclass(frozen=True)
class Rate:
    """What one detector found in one condition of the set."""

    detector: str
    condition: str  # "0 face", "1 face", "2 face", "lfw face", "lfw none"
    frames: int
    faces: int  # faces put in the frames
    found: int
    false: int  # detections that matched no face


@dataclass(frozen=True)
class FaceBenchResult:
    cpu: int | None  # the core the run was pinned to (None: pinning not available)
    width: int
    height: int
    blazeface: Cost  # the detector alone (vision.landmarks off), per frame
    mesh: Cost  # the face mesh, per face
    blazeface_mesh: Cost  # per frame with one face, the detector and the mesh
    # per frame with one face as configured by default (the detector on every
    # vision.detect_every-th frame, the mesh following between): the mean, what the CPU pays
    configured_mean_ms: float
    detect_every: int
    haar: Cost  # per frame
    cpu_s: float  # the run's CPU time
    wall_s: float  # the run's wall time
    rates: tuple[Rate, ...]
    # this machine's speed just before: 1e6 pure-Python additions (ms; the costs scale with it)
    python_ms: float = math.nan

    @property
    def core_share_at_fps(self) -> float:
        """The share of one core BlazeFace with the mesh on every frame takes at 15 frames a
        second with one face in view (p50)."""
        return self.blazeface_mesh.p50_ms * FPS / 1000

    @property
    def configured_share_at_fps(self) -> float:
        """The same as configured by default (``detect_every``; the mean)."""
        return self.configured_mean_ms * FPS / 1000


@contextmanager
def one_core() -> Iterator[int | None]:
    """This thread pinned to one CPU (the last it may use) and OpenCV on one thread, both
    restored after; yields the CPU (None where affinity cannot be set)."""
    from anima.vision.faces.models import opencv

    cv2 = opencv()
    threads = cv2.getNumThreads()
    cv2.setNumThreads(1)
    allowed = os.sched_getaffinity(0) if hasattr(os, "sched_getaffinity") else None
    cpu = max(allowed) if allowed else None
    try:
        if allowed and cpu is not None:
            os.sched_setaffinity(0, {cpu})
        yield cpu
    finally:
        if allowed:
            os.sched_setaffinity(0, allowed)
        cv2.setNumThreads(threads)


def matches(face: Box, truth: Box) -> bool:
    cx, cy = face.center
    inside = truth.x0 <= cx <= truth.x1 and truth.y0 <= cy <= truth.y1
    return inside and 0.5 <= face.height / truth.height <= 2.0


def score(detector: str, scenes: list[Scene], found: list[list[Face]]) -> list[Rate]:
    """Found and false detections per condition (the scene's name: "1 face", "lfw none")."""
    rows: dict[str, list[int]] = {}
    for scene, faces in zip(scenes, found, strict=True):
        row = rows.setdefault(scene.name, [0, 0, 0, 0])
        taken: set[int] = set()
        for truth in scene.faces:
            hit = next(
                (i for i, f in enumerate(faces) if i not in taken and matches(f.box, truth.box)),
                None,
            )
            if hit is not None:
                taken.add(hit)
        row[0] += 1
        row[1] += len(scene.faces)
        row[2] += len(taken)
        row[3] += len(faces) - len(taken)
    return [Rate(detector, c, *r) for c, r in rows.items()]


def timed(call: Callable[[], object], times: list[float]) -> None:
    start = time.perf_counter()
    call()
    times.append((time.perf_counter() - start) * 1000)


def cost(times: list[float]) -> Cost:
    return Cost(round(percentile(times, 50), 3), round(percentile(times, 95), 3), len(times))


def run_face_bench(
    *, frames: int = 60, repeats: int = 3, haar_frames: int = 30, lfw: int = 100
) -> FaceBenchResult:
    """Measure the three engines on ``frames`` composited frames (BlazeFace ``repeats`` times
    over them, Haar on the first ``haar_frames``) and ``lfw`` LFW faces and non-faces (once)."""
    from anima.vision.faces.blazeface import BlazeFace
    from anima.vision.faces.haar import Haar
    from anima.vision.faces.mesh import FaceMesh

    speed = python_speed_ms()
    scenes = measured_set(frames, faces=lfw)
    config = VisionConfig()
    detector = BlazeFace(VisionConfig(landmarks=False))
    full = BlazeFace(VisionConfig(detect_every=1))
    default = BlazeFace(config)  # the detector every detect_every-th frame, the mesh between
    mesh = FaceMesh()
    haar = Haar(config)
    cpu0, wall0 = time.process_time(), time.perf_counter()
    try:
        with one_core() as cpu:
            for scene in scenes[:3]:  # warm up: the first invocations allocate
                detector.detect(scene.image)
                full.detect(scene.image)
            blaze_ms: list[float] = []
            for _ in range(repeats):
                for scene in scenes[:frames]:
                    timed(partial(detector.detect, scene.image), blaze_ms)
            mesh_ms: list[float] = []
            both_ms: list[float] = []
            default_ms: list[float] = []
            for scene in scenes:
                faces = detector.detect(scene.image)
                for face in faces:
                    corners = np.array([[face.box.x0, face.box.y0], [face.box.x1, face.box.y1]])
                    timed(partial(mesh.read, scene.image, face, corners), mesh_ms)
                if len(faces) == 1:
                    timed(partial(full.detect, scene.image), both_ms)
                    timed(partial(default.detect, scene.image), default_ms)
            haar_ms: list[float] = []
            haar_found: list[list[Face]] = []
            haar_scenes = scenes[:haar_frames] + scenes[frames:]
            for scene in haar_scenes:
                start = time.perf_counter()
                haar_found.append(haar.detect(scene.image))
                haar_ms.append((time.perf_counter() - start) * 1000)
            blaze_found = [detector.detect(scene.image) for scene in scenes]
    finally:
        for made in (detector, full, default, mesh, haar):
            made.close()
    height, width = scenes[0].image.shape[:2]
    return FaceBenchResult(
        cpu=cpu,
        width=width,
        height=height,
        blazeface=cost(blaze_ms),
        mesh=cost(mesh_ms),
        blazeface_mesh=cost(both_ms),
        configured_mean_ms=round(float(np.mean(default_ms)), 3) if default_ms else math.nan,
        detect_every=config.detect_every,
        haar=cost(haar_ms),
        cpu_s=round(time.process_time() - cpu0, 2),
        wall_s=round(time.perf_counter() - wall0, 2),
        rates=tuple(
            score("blazeface", scenes, blaze_found) + score("haar", haar_scenes, haar_found)
        ),
        python_ms=speed,
    )


def report_lines(r: FaceBenchResult) -> list[str]:
    """The figures as lines of text (``anima bench attention`` prints them)."""
    where = f"CPU {r.cpu}" if r.cpu is not None else "unpinned"
    lines = [
        f"faces at {r.width}×{r.height}, one core ({where}), ms per call p50 / p95 (calls):",
        f"  blazeface (detector)     {r.blazeface.p50_ms:7.2f} / {r.blazeface.p95_ms:7.2f}"
        f"  ({r.blazeface.calls})",
        f"  face mesh (per face)     {r.mesh.p50_ms:7.2f} / {r.mesh.p95_ms:7.2f}  ({r.mesh.calls})",
        f"  blazeface + mesh, 1 face {r.blazeface_mesh.p50_ms:7.2f} / "
        f"{r.blazeface_mesh.p95_ms:7.2f}  ({r.blazeface_mesh.calls}): "
        f"{r.core_share_at_fps:.1%} of one core at {FPS:g} fps",
        f"  … detected every {r.detect_every} frames, the mesh following between (default): "
        f"{r.configured_mean_ms:.2f} ms a frame (mean), {r.configured_share_at_fps:.1%} of one "
        f"core at {FPS:g} fps",
        f"  haar cascade             {r.haar.p50_ms:7.2f} / {r.haar.p95_ms:7.2f}  ({r.haar.calls})",
        f"  run: {r.cpu_s:.2f} s CPU in {r.wall_s:.2f} s; this machine's speed before: 1e6 "
        f"Python additions in {r.python_ms:.0f} ms",
        "detection (set never used for tuning): found / faces, false detections / frames",
    ]
    for rate in r.rates:
        share = f"{rate.found / rate.faces:6.1%}" if rate.faces else "     -"
        lines.append(
            f"  {rate.detector:9} {rate.condition:8} {rate.found:3} / {rate.faces:3} {share}"
            f"   false {rate.false:3} / {rate.frames:3} frames"
        )
    return lines
