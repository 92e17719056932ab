"""A real camera through OpenCV (``vision.source: camera``): opened on ``start``, read on its
own thread, each frame stamped with the runtime clock's time when its grab returned.

The stamp is late by what cannot be measured here: the exposure, the sensor's readout and the
USB transfer (about one frame period on a UVC webcam: 30–70 ms). The capture buffer is asked to
hold one frame and the thread only grabs, decodes and scales, so it keeps up with the camera
and a grab never returns a frame that waited in a queue of older ones.
"""

from __future__ import annotations

import logging
import threading
from typing import Any

from anima.clock import Clock
from anima.errors import ConfigError
from anima.vision.sources.feed import STOPPED, Feed
from anima.vision.sources.opencv import load_cv2, prepare
from anima.vision.types import FrameSink, VideoFrame

log = logging.getLogger(__name__)

VGA = (640, 480)  # every UVC camera has this mode; larger ones cost decode time for nothing


class OpenCVCamera:
    """The camera ``device`` names (an index: 0 is the first; or a path such as
    ``/dev/video2``), asked for ``fps`` frames a second; its frames scaled to ``width``."""

    def __init__(
        self, device: int | str, *, clock: Clock, fps: float, width: int, mirrored: bool = False
    ) -> None:
        self.name = f"camera {device}"
        self._device = device
        self._clock = clock
        self._fps = fps
        self._width = width
        self._mirrored = mirrored
        self._feed: Feed | None = None

    def start(self, sink: FrameSink) -> None:
        """Open the camera (a :class:`ConfigError` naming it when it cannot be) and start its
        thread; a second start while running does nothing."""
        if self._feed is not None:
            return
        cv2 = load_cv2()
        capture = cv2.VideoCapture(self._device)
        if not capture.isOpened():
            capture.release()
            raise ConfigError(
                f"vision.device: cannot open the camera {self._device!r} (is it plugged in, "
                "and free? `v4l2-ctl --list-devices` lists them)",
                key="vision.device",
            )
        capture.set(cv2.CAP_PROP_BUFFERSIZE, 1)  # the newest frame, not one queued behind it
        capture.set(cv2.CAP_PROP_FPS, self._fps)
        if self._width <= VGA[0]:
            capture.set(cv2.CAP_PROP_FRAME_WIDTH, VGA[0])
            capture.set(cv2.CAP_PROP_FRAME_HEIGHT, VGA[1])

        def loop(stopping: threading.Event) -> str:
            return self._loop(cv2, capture, sink, stopping)

        self._feed = Feed(self.name, sink, loop=loop, release=capture.release, thread="camera")
        self._feed.start()
        log.info("%s: open, asked for %g fps", self.name, self._fps)

    def stop(self, timeout: float = 1.0) -> None:
        feed, self._feed = self._feed, None
        if feed is not None:
            feed.stop(timeout)

    def _loop(self, cv2: Any, capture: Any, sink: FrameSink, stopping: threading.Event) -> str:
        index = 0
        while not stopping.is_set():
            try:
                grabbed = capture.grab()
                t = self._clock.now()  # the grab returned: the frame is here
                ok, image = capture.retrieve() if grabbed else (False, None)
            except cv2.error as exc:
                log.warning("%s failed after %d frames: %s", self.name, index, exc)
                return f"{self.name} failed: {exc}"
            if not ok or image is None:  # unplugged, or a file's end when device is a path
                log.warning("%s stopped delivering frames after %d (unplugged?)", self.name, index)
                return f"{self.name} stopped delivering frames"
            sink.frame(
                VideoFrame(
                    image=prepare(cv2, image, self._width, mirrored=self._mirrored),
                    t=t,
                    index=index,
                )
            )
            index += 1
        return STOPPED
