"""A video file or a folder of frames (``vision.source: video``, ``anima serve --video-in``),
played at its own pace on the runtime clock: the frames as the camera saw them.

Frame ``i`` is due ``i / fps`` seconds after the start and stamped with that time; on a
:class:`~anima.testing.FakeClock` with ``autojump`` the file plays at the speed of the CPU.
The pace is ``vision.video_fps`` when given (``--video-fps``), else the file's own frame rate
(a folder has none: ``vision.fps``). A frame more than one period late is skipped, as a camera
drops what nobody read, and its index is not used: a gap in ``VideoFrame.index`` is a drop.
"""

from __future__ import annotations

import logging
import math
import threading
from pathlib import Path
from typing import Any, Protocol

from anima.clock import Clock
from anima.errors import ConfigError
from anima.vision.sources.feed import STOPPED, Feed
from anima.vision.sources.opencv import load_cv2, prepare
from anima.vision.types import FrameSink, VideoFrame

log = logging.getLogger(__name__)

IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg")  # a folder's frames, in the order of their names
END = "end of video"


class Frames(Protocol):
    """Images read in order (BGR, as OpenCV reads them)."""

    fps: float | None  # the source's own frame rate, when it has one

    def read(self) -> Any:
        """The next image, or None at the end."""

    def skip(self) -> bool:
        """Pass over the next image without decoding it (False at the end)."""

    def close(self) -> None: ...


class FileFrames:
    """A video file OpenCV reads (its FFmpeg reads most)."""

    def __init__(self, cv2: Any, path: Path) -> None:
        self._capture = cv2.VideoCapture(str(path))
        if not self._capture.isOpened():
            self._capture.release()
            raise ConfigError(
                f"vision.video_in: {path}: not a video OpenCV can read", key="vision.video_in"
            )
        fps = float(self._capture.get(cv2.CAP_PROP_FPS))
        self.fps = fps if math.isfinite(fps) and 0.1 <= fps <= 240 else None

    def read(self) -> Any:
        ok, image = self._capture.read()
        return image if ok else None

    def skip(self) -> bool:
        return bool(self._capture.grab())

    def close(self) -> None:
        self._capture.release()


class FolderFrames:
    """The PNG and JPEG files of a folder, sorted by name."""

    def __init__(self, cv2: Any, path: Path) -> None:
        self.fps: float | None = None  # a folder has no frame rate of its own
        self._cv2 = cv2
        self._files = sorted(p for p in path.iterdir() if p.suffix.lower() in IMAGE_SUFFIXES)
        if not self._files:
            raise ConfigError(
                f"vision.video_in: {path}: a folder with no .png or .jpg frame",
                key="vision.video_in",
            )
        self._next = 0

    def read(self) -> Any:
        while self._next < len(self._files):
            path = self._files[self._next]
            self._next += 1
            image = self._cv2.imread(str(path), self._cv2.IMREAD_COLOR)
            if image is not None:
                return image
            log.warning("video: %s is not an image OpenCV reads; skipped", path)
        return None

    def skip(self) -> bool:
        self._next += 1
        return self._next <= len(self._files)

    def close(self) -> None:
        self._files = []


def open_frames(cv2: Any, video_in: str) -> Frames:
    """The frames ``video_in`` names: a folder of images, else a video file."""
    path = Path(video_in).expanduser()
    if path.is_dir():
        return FolderFrames(cv2, path)
    if not path.is_file():
        raise ConfigError(
            f"vision.video_in: {video_in}: no such file or folder", key="vision.video_in"
        )
    return FileFrames(cv2, path)


class VideoPlayer:
    """``video_in`` played on ``clock`` at ``fps`` (None: the file's own, else
    ``default_fps``), its frames scaled to ``width``."""

    def __init__(
        self,
        video_in: str,
        *,
        clock: Clock,
        fps: float | None,
        default_fps: float,
        width: int,
        mirrored: bool = False,
    ) -> None:
        self.name = f"video {video_in}"
        self._video_in = video_in
        self._clock = clock
        self._fps = fps
        self._default_fps = default_fps
        self._width = width
        self._mirrored = mirrored
        self._feed: Feed | None = None
        self.pace: float | None = None  # frames a second, once started

    def start(self, sink: FrameSink) -> None:
        """Open the file or folder and read its first frame (a :class:`ConfigError` naming
        it when either fails), then play it on its own thread; a second start does nothing."""
        if self._feed is not None:
            return
        cv2 = load_cv2()
        frames = open_frames(cv2, self._video_in)
        first = frames.read()
        if first is None:
            frames.close()
            raise ConfigError(
                f"vision.video_in: {self._video_in}: no frame could be read",
                key="vision.video_in",
            )
        pace = self._fps or frames.fps or self._default_fps
        self.pace = pace

        def loop(stopping: threading.Event) -> str:
            return self._loop(
                cv2, frames=frames, image=first, pace=pace, sink=sink, stopping=stopping
            )

        self._feed = Feed(self.name, sink, loop=loop, release=frames.close, thread="video")
        self._feed.start()
        log.info("%s: playing at %g fps", self.name, pace)

    def stop(self, timeout: float = 1.0) -> None:
        feed, self._feed = self._feed, None
        if feed is not None:
            feed.stop(timeout)

    def _loop(
        self,
        cv2: Any,
        *,
        frames: Frames,
        image: Any,
        pace: float,
        sink: FrameSink,
        stopping: threading.Event,
    ) -> str:
        start = self._clock.now()  # frame 0 is due now
        index = 0
        while True:
            ready = prepare(cv2, image, self._width, mirrored=self._mirrored)
            due = start + index / pace
            # a wait on the event, not sleep_until: a stop ends it at once on the real clock
            if self._clock.wait(stopping, max(0.0, due - self._clock.now())):
                return STOPPED
            sink.frame(VideoFrame(image=ready, t=due, index=index))
            index += 1
            passed = math.floor((self._clock.now() - start) * pace)  # the frames now due
            while index < passed:  # more than a period late: skip, as a camera drops
                if not frames.skip():
                    return END
                index += 1
            image = frames.read()
            if image is None:
                return END
