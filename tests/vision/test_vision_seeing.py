"""The camera and the face detector together in the vision process (``vision.process`` with a
``camera`` or ``video`` source on the real clock): the faces come back stamped on the runtime's
clock with their frame's index and size, the dashboard's view is drawn there, a camera that
cannot open is the same error as in-process, a child that dies is started again with its
camera, and a runtime seeing this way never imports OpenCV."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from anima.config.vision import VisionConfig
from anima.errors import ConfigError
from anima.testing.waiting import process_gone
from anima.vision.types import Face, VideoFrame

pytestmark = pytest.mark.model

cv2 = pytest.importorskip("cv2", reason="needs the vision extra")
pytest.importorskip("ai_edge_litert", reason="needs the vision extra")
skimage_data = pytest.importorskip("skimage.data", reason="needs the test extra (scikit-image)")

from anima.vision.faces.models import missing  # noqa: E402
from anima.vision.seeing import SeeingProcess  # noqa: E402

if missing() is not None:
    pytest.skip(f"the face models are not installed: {missing()}", allow_module_level=True)

WAIT_S = 20.0  # a process's start and a few frames, on a loaded machine
FRAMES = 6


def gone(pid: int, within: float = WAIT_S) -> bool:
    return process_gone(pid, within)


@pytest.fixture
def faces_folder(tmp_path: Path) -> Path:
    """``FRAMES`` 320×240 frames of the astronaut's head (a ~60 px face) on grey, moving right."""
    folder = tmp_path / "frames"
    folder.mkdir()
    head = np.ascontiguousarray(skimage_data.astronaut()[10:250:2, 110:340:2, ::-1])  # BGR
    h, w = head.shape[:2]
    for i in range(FRAMES):
        frame = np.full((240, 320, 3), 128, np.uint8)
        left = 60 + 20 * i
        frame[60 : 60 + h, left : left + w] = head
        assert cv2.imwrite(str(folder / f"{i:03d}.png"), frame)
    return folder


class Seen:
    """``on_faces`` and ``on_end``, recorded."""

    def __init__(self) -> None:
        self.frames: list[tuple[VideoFrame, list[Face]]] = []
        self.ends: list[str] = []
        self.ended = threading.Event()
        self.arrived = threading.Event()

    def on_faces(self, frame: VideoFrame, faces: list[Face]) -> None:
        self.frames.append((frame, list(faces)))
        self.arrived.set()

    def on_end(self, reason: str) -> None:
        self.ends.append(reason)
        self.ended.set()


@pytest.fixture
def seen() -> Seen:
    return Seen()


def test_faces_come_back_stamped_on_this_clock_and_the_view_is_drawn_there(
    faces_folder: Path, seen: Seen
) -> None:
    config = VisionConfig(
        source="video", video_in=str(faces_folder), video_fps=10.0, detect_every=1
    )
    began = time.monotonic()
    vision = SeeingProcess(config, seen.on_faces, on_end=seen.on_end)
    try:
        assert vision.name == "blazeface"
        assert vision.pid is not None
        assert vision.pid != os.getpid()
        assert vision.view([]) is None  # no frame yet
        vision.start()
        assert seen.ended.wait(WAIT_S)
        assert seen.ends == ["end of video"]
        indices = [f.index for f, _ in seen.frames]
        # in order; a frame may be dropped when a loaded machine detects slower than 10 fps
        assert indices == sorted(set(indices))
        assert len(indices) >= FRAMES - 2
        for frame, faces in seen.frames:
            assert (frame.width, frame.height) == (320, 240)
            assert began < frame.t < time.monotonic()  # the child's capture time, our clock
            assert len(faces) == 1
            assert faces[0].yaw_deg is not None
        xs = [faces[0].box.center[0] for _, faces in seen.frames]
        assert xs == sorted(xs)
        assert xs[-1] - xs[0] > 0.2  # 100 px (80 with one end dropped) of 320
        stats = vision.stats()
        assert (stats.frames_in, stats.processed, stats.errors) == (FRAMES, len(indices), 0)
        assert stats.dropped == FRAMES - len(indices)
        assert stats.detect_ms_p50 is not None
        assert stats.detect_ms_p50 > 0
        assert stats.detector_cpu_s > 0  # the child's CPU on frames
        assert stats.ended == "end of video"
        box = seen.frames[-1][1][0].box
        jpeg = vision.view([(box.x0, box.y0, box.x1, box.y1, 0.9, True)], quality=80)
        assert jpeg is not None
        assert jpeg[:2] == b"\xff\xd8"
        drawn = cv2.imdecode(np.frombuffer(jpeg, np.uint8), cv2.IMREAD_COLOR)
        assert drawn.shape == (240, 320, 3)
        x0 = int(box.x0 * 320)
        edge = drawn[int(box.y0 * 240) + 5 : int(box.y1 * 240) - 5, x0].astype(int)
        # the looked-at box is drawn in orange (BGR 0, 140, 255) on its left edge
        assert abs(np.median(edge[:, 2]) - 255) < 40
        assert np.median(edge[:, 0]) < 60
        pid = vision.pid
    finally:
        vision.stop(5.0)
    assert pid is not None
    assert gone(pid)
    assert vision.view([]) is None  # stopped: no view, no error


def test_a_camera_that_cannot_open_is_the_same_error_and_no_child_is_left(seen: Seen) -> None:
    vision = SeeingProcess(VisionConfig(source="camera", device="/dev/video-none"), seen.on_faces)
    pid = vision.pid
    assert pid is not None
    with pytest.raises(ConfigError, match="cannot open the camera '/dev/video-none'"):
        vision.start()
    assert gone(pid)
    assert seen.frames == []


def test_a_missing_video_is_refused_when_made(tmp_path: Path, seen: Seen) -> None:
    config = VisionConfig(source="video", video_in=str(tmp_path / "nothing.mp4"))
    with pytest.raises(ConfigError, match=r"nothing\.mp4") as caught:
        SeeingProcess(config, seen.on_faces).start()
    assert caught.value.key == "vision.video_in"


@pytest.mark.parametrize(
    ("sent", "logged"),
    [(signal.SIGKILL, "killed by SIGKILL"), (signal.SIGSTOP, "sent nothing for 1.0 s")],
)
def test_a_child_killed_or_stuck_is_started_again_with_its_camera(
    faces_folder: Path,
    seen: Seen,
    caplog: pytest.LogCaptureFixture,
    sent: signal.Signals,
    logged: str,
) -> None:
    """A child that dies (SIGKILL) is started again at once; one stuck (SIGSTOP: it sends
    nothing) is killed after ``stall_s`` (or three frame periods), then started again."""
    config = VisionConfig(source="video", video_in=str(faces_folder), video_fps=5.0)
    vision = SeeingProcess(config, seen.on_faces, on_end=seen.on_end, stall_s=1.0)
    try:
        vision.start()
        assert seen.arrived.wait(WAIT_S)
        first = vision.pid
        assert first is not None
        os.kill(first, sent)
        assert gone(first)
        seen.arrived.clear()
        assert seen.arrived.wait(WAIT_S)  # frames again, from a new child
        assert vision.restarts == 1
        assert vision.pid not in (None, first)
        assert logged in caplog.text
        assert not seen.ended.is_set()  # the frames did not end: vision went on
    finally:
        vision.stop(5.0)
    assert seen.ends == ["stopped"]


def test_a_seeing_runtime_never_imports_opencv(faces_folder: Path) -> None:
    """A runtime with a video source on the real clock sees the person with OpenCV in the
    vision process only (its import would hold the loop's interpreter lock for 25-55 ms)."""
    script = textwrap.dedent(
        f"""
        import sys, time
        from anima.build import build
        from anima.config import AnimaConfig, SpeechConfig
        from anima.config.vision import AttentionConfig, VisionConfig
        from anima.vision.seeing import SeeingProcess
        cfg = AnimaConfig(
            speech=SpeechConfig(enabled=False),
            vision=VisionConfig(source="video", video_in={str(faces_folder)!r}, video_fps=5.0),
            attention=AttentionConfig(idle_glances=False),
        )
        runtime = build(cfg, doors=False, audio_in="none", report=lambda _line: None)
        runtime.start()
        try:
            part = runtime.attention
            assert isinstance(part.pipeline, SeeingProcess), part.pipeline
            assert part.pipeline.wait_ended({WAIT_S})
            assert runtime.state().attention.people, "nobody seen"
            jpeg = part.view()
            assert jpeg is not None and jpeg[:2] == b"\\xff\\xd8"
            print("cv2 imported:", "cv2" in sys.modules)
        finally:
            runtime.stop(ease=False)
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], check=False, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "cv2 imported: False" in done.stdout
