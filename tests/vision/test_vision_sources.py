"""Cameras (``vision.source``): a video file or a folder of frames played at its pace on the
runtime clock, the OpenCV camera's capture thread (read through a video file: there is no
camera here), what every frame becomes before it is handed on (scaled, RGB, unmirrored), the
errors a bad device or path gets, and the ``--video-in`` and ``vision.device`` config."""

from __future__ import annotations

import logging
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import cv2
import numpy as np
import pytest

from anima.clock import MonotonicClock
from anima.config import VisionConfig, load_config
from anima.config.vision import SOURCES
from anima.errors import ConfigError, MissingDependencyError
from anima.testing import FakeClock
from anima.vision.sources import VideoPlayer, make_camera, make_none, make_video
from anima.vision.sources.opencv import prepare
from anima.vision.types import Camera, VideoFrame

pytestmark = pytest.mark.fast

WAIT_S = 10.0  # real seconds: only a hang reaches this


class Recorder:
    """A sink that keeps every frame and every end."""

    def __init__(self) -> None:
        self.frames: list[VideoFrame] = []
        self.ends: list[str] = []
        self.ended = threading.Event()
        self._changed = threading.Condition()

    def frame(self, frame: VideoFrame) -> None:
        with self._changed:
            self.frames.append(frame)
            self._changed.notify_all()

    def end(self, reason: str) -> None:
        self.ends.append(reason)
        self.ended.set()

    def wait_frames(self, count: int) -> None:
        with self._changed:
            assert self._changed.wait_for(lambda: len(self.frames) >= count, WAIT_S)


def bgr(width: int, height: int, level: int) -> np.ndarray:
    """A frame: its left half red (BGR 0, 0, 255), its right half grey at ``level``."""
    image = np.full((height, width, 3), level, np.uint8)
    image[:, : width // 2] = (0, 0, 255)
    return image


@pytest.fixture
def clip(tmp_path: Path) -> Path:
    """12 frames at 15 fps, 320×240 MJPG; frame i's right half is grey 20·i."""
    path = tmp_path / "clip.avi"
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter.fourcc(*"MJPG"), 15.0, (320, 240))
    assert writer.isOpened()
    for i in range(12):
        writer.write(bgr(320, 240, 20 * i))
    writer.release()
    return path


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    """5 lossless 100×40 frames, written out of order, and a file that is not a frame."""
    path = tmp_path / "frames"
    path.mkdir()
    for i in (3, 0, 4, 1, 2):
        assert cv2.imwrite(str(path / f"f{i:03d}.png"), bgr(100, 40, 40 * i))
    (path / "notes.txt").write_text("not a frame")
    return path


@pytest.fixture
def clock() -> Iterator[FakeClock]:
    with FakeClock(autojump=True) as c:
        yield c


def video(config: VisionConfig, clock: FakeClock) -> Camera:
    camera = make_video(config, clock)
    assert camera is not None
    return camera


def play(camera: Camera) -> Recorder:
    sink = Recorder()
    camera.start(sink)
    assert sink.ended.wait(WAIT_S)
    camera.stop()
    return sink


def right_grey(frame: VideoFrame) -> float:
    return float(frame.image[:, frame.width * 3 // 4 :].mean())


# ------------------------------------------------------------------ a folder, a file
def test_a_folder_plays_in_name_order_at_its_pace_on_the_runtime_clock(
    folder: Path, clock: FakeClock
) -> None:
    start = clock.now()
    config = VisionConfig(source="video", video_in=str(folder), fps=10, width=64)
    sink = play(video(config, clock))
    assert sink.ends == ["end of video"]
    assert [f.index for f in sink.frames] == [0, 1, 2, 3, 4]
    assert [f.t - start for f in sink.frames] == pytest.approx([0, 0.1, 0.2, 0.3, 0.4])
    assert [right_grey(f) for f in sink.frames] == pytest.approx([0, 40, 80, 120, 160], abs=1)
    first = sink.frames[0]
    assert (first.width, first.height) == (64, 26)  # 100×40 scaled: the aspect kept (25.6)
    assert first.image.dtype == np.uint8
    assert first.image.flags.c_contiguous
    assert tuple(first.image[13, 2]) == (255, 0, 0)  # red on the left: RGB now, not mirrored


def test_a_video_file_plays_at_its_own_frame_rate_or_at_video_fps(
    clip: Path, clock: FakeClock
) -> None:
    own = VideoPlayer(str(clip), clock=clock, fps=None, default_fps=2, width=160)
    start = clock.now()
    sink = play(own)
    assert own.pace == pytest.approx(15.0)  # the file's, not default_fps
    assert len(sink.frames) == 12
    assert sink.frames[-1].t - start == pytest.approx(11 / 15)
    assert [right_grey(f) for f in sink.frames] == pytest.approx(
        [20 * i for i in range(12)], abs=6
    )  # MJPG is lossy: within a few levels
    assert sink.frames[0].width == 160
    config = VisionConfig(source="video", video_in=str(clip), video_fps=5)
    start = clock.now()
    sink = play(video(config, clock))
    assert [f.t - start for f in sink.frames[:3]] == pytest.approx([0, 0.2, 0.4])


def test_a_late_player_skips_frames_as_a_camera_drops_them_and_stops_at_once(
    folder: Path,
) -> None:
    clock = FakeClock()  # stepped: the test moves time
    player = VideoPlayer(str(folder), clock=clock, fps=None, default_fps=10, width=64)
    sink = Recorder()
    player.start(sink)
    sink.wait_frames(1)  # frame 0 is due at the start
    clock.advance(0.35)  # frames 1, 2 and 3 are due: 1 was waiting, 2 is a period late
    sink.wait_frames(3)
    assert [f.index for f in sink.frames] == [0, 1, 3]
    assert [round(f.t - 1000.0, 6) for f in sink.frames] == [0.0, 0.1, 0.3]
    player.stop()  # frame 4 waits 0.05 s of a clock nobody moves: the stop ends it
    assert sink.ends == ["stopped"]
    player.stop()
    assert sink.ends == ["stopped"]  # once


def test_mirrored_frames_are_turned_back(folder: Path, clock: FakeClock) -> None:
    config = VisionConfig(source="video", video_in=str(folder), width=100, mirrored=True)
    frame = play(video(config, clock)).frames[0]
    assert tuple(frame.image[20, 99]) == (255, 0, 0)  # the red half is on the right now
    assert tuple(frame.image[20, 0]) == (0, 0, 0)


def test_prepare_takes_grey_and_alpha_frames_and_enlarges_small_ones() -> None:
    grey = prepare(cv2, np.full((30, 40), 90, np.uint8), 80, mirrored=False)
    assert grey.shape == (60, 80, 3)
    assert int(grey.min()) == int(grey.max()) == 90
    bgra = np.zeros((10, 20, 4), np.uint8)
    bgra[..., 0] = 200  # blue
    assert tuple(prepare(cv2, bgra, 20, mirrored=False)[5, 5]) == (0, 0, 200)


@pytest.mark.parametrize(
    ("name", "says"),
    [
        ("missing.mp4", "no such file or folder"),
        ("junk.avi", "not a video OpenCV can read"),
        ("empty", "no .png or .jpg frame"),
        ("broken", "no frame could be read"),
    ],
)
def test_a_missing_or_unreadable_video_is_a_config_error_naming_it(
    tmp_path: Path, clock: FakeClock, name: str, says: str
) -> None:
    (tmp_path / "junk.avi").write_text("not a video")
    (tmp_path / "empty").mkdir()
    (tmp_path / "broken").mkdir()
    (tmp_path / "broken" / "0.png").write_bytes(b"not a png")
    path = tmp_path / name
    camera = make_video(VisionConfig(source="video", video_in=str(path)), clock)
    assert camera is not None
    sink = Recorder()
    with pytest.raises(ConfigError, match=says) as caught:
        camera.start(sink)
    assert str(path) in str(caught.value)
    assert caught.value.key == "vision.video_in"
    camera.stop()
    assert sink.ends == []  # it never started


# ------------------------------------------------------------------ the camera
def test_a_camera_that_cannot_be_opened_is_an_error_naming_it(clock: FakeClock) -> None:
    for device in (7, "/dev/video-none"):
        camera = make_camera(VisionConfig(source="camera", device=device), clock)
        assert camera is not None
        with pytest.raises(ConfigError, match=f"cannot open the camera {device!r}"):
            camera.start(Recorder())
        camera.stop()


def test_the_capture_thread_stamps_each_grab_and_ends_when_frames_stop(
    clip: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """The camera's own thread, reading a file as it reads a device: each frame stamped when
    its grab returned, and frames that stop coming (an unplugged camera; here, the file's
    end) end the sink with a log line, no crash."""
    clock = MonotonicClock()
    camera = make_camera(VisionConfig(source="camera", device=str(clip), width=80), clock)
    assert camera is not None
    before = clock.now()
    with caplog.at_level(logging.WARNING, logger="anima.vision.sources.camera"):
        sink = play(camera)
    after = clock.now()
    assert [f.index for f in sink.frames] == list(range(12))
    stamps = [f.t for f in sink.frames]
    assert before <= stamps[0]
    assert stamps[-1] <= after
    assert stamps == sorted(stamps)
    assert sink.frames[5].image.shape == (60, 80, 3)
    assert right_grey(sink.frames[5]) == pytest.approx(100, abs=6)
    assert sink.ends == [f"camera {clip} stopped delivering frames"]
    assert "stopped delivering frames after 12" in caplog.text


def test_a_sink_that_fails_ends_the_camera_not_the_runtime(clip: Path) -> None:
    class Failing(Recorder):
        def frame(self, frame: VideoFrame) -> None:
            raise RuntimeError("full")

    camera = make_camera(VisionConfig(source="camera", device=str(clip)), MonotonicClock())
    assert camera is not None
    sink = Failing()
    camera.start(sink)
    assert sink.ended.wait(WAIT_S)
    camera.stop()
    assert sink.ends == [f"camera {clip} failed: full"]


def test_without_opencv_the_error_names_the_vision_extra(
    monkeypatch: pytest.MonkeyPatch, clip: Path, clock: FakeClock
) -> None:
    monkeypatch.setitem(sys.modules, "cv2", None)  # import cv2 now raises ImportError
    for config in (
        VisionConfig(source="camera"),
        VisionConfig(source="video", video_in=str(clip)),
    ):
        camera = SOURCES.load(config.source)(config, clock)
        with pytest.raises(MissingDependencyError, match=r"anima\[vision\]"):
            camera.start(Recorder())


def test_the_makers_share_one_signature_and_touch_nothing(clock: FakeClock) -> None:
    assert make_none(VisionConfig(), clock) is None
    made = {
        "camera": VisionConfig(source="camera", device=3),
        "video": VisionConfig(source="video", video_in="/nowhere/clip.mp4"),
    }
    for name, config in made.items():
        camera = SOURCES.load(name)(config, clock)  # no device opened, no path read
        assert isinstance(camera, Camera)
        camera.stop()  # before start: nothing to stop


# ------------------------------------------------------------------ config
def test_vision_device_is_an_index_or_a_path(tmp_path: Path) -> None:
    path = tmp_path / "anima.yaml"
    for text, device in (("0", 0), ('"1"', 1), ("/dev/video2", "/dev/video2")):
        path.write_text(f"vision:\n  source: camera\n  device: {text}\n")
        assert load_config(path, env={}).vision.device == device
    env = {"ANIMA_VISION__DEVICE": "2"}
    assert load_config(None, env=env).vision.device == 2
    for bad in ("-1", '""', "true", "[0]"):
        path.write_text(f"vision:\n  device: {bad}\n")
        with pytest.raises(ConfigError, match=r"vision\.device"):
            load_config(path, env={})


def test_anima_serve_video_in_makes_the_video_source(monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    from anima.cli import serve

    for name in [n for n in os.environ if n.startswith("ANIMA_")]:
        monkeypatch.delenv(name)  # the process's own (ANIMA_ARTIFACTS in CI) are not these flags

    def configure(**flags: object) -> VisionConfig:
        args: dict[str, object] = {"record": None, "driver": None, "port": None, "broker": None}
        return serve.configure(None, mqtt=True, **args, **flags).vision  # type: ignore[arg-type]

    assert configure().source == "none"
    vision = configure(video_in="people.mp4")
    assert (vision.source, vision.video_in, vision.video_fps) == ("video", "people.mp4", None)
    assert configure(video_in="people.mp4", video_fps=15).video_fps == 15.0
    with pytest.raises(ConfigError, match="--video-fps 15 needs a video"):
        configure(video_fps=15)
    with pytest.raises(ConfigError, match=r"vision\.video_fps must be"):
        configure(video_in="people.mp4", video_fps=0)


def test_every_maker_takes_the_heads_pose_the_sim_camera_films_with(clock: FakeClock) -> None:
    """One call makes any camera (attention passes the head's pose to every maker): the
    simulated head camera films with it, a real camera or a video ignores it."""
    poses: list[float] = []

    def pose_at(t: float) -> tuple[float, ...]:
        poses.append(t)
        return (0.0, 0.0)

    made = {
        "none": VisionConfig(),
        "camera": VisionConfig(source="camera", device=3),
        "video": VisionConfig(source="video", video_in="/nowhere/clip.mp4"),
        "sim": VisionConfig(source="sim"),
    }
    assert set(made) == set(SOURCES.names)
    for name, config in made.items():
        camera = SOURCES.load(name)(config, clock, pose_at=pose_at)
        if name == "sim":
            camera.capture(0.25)  # one frame rendered for the head's pose at its capture
        if camera is not None:
            camera.stop()
    assert poses == [0.25]  # asked by the simulated camera only, for its frame's time
