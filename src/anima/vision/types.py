"""What cameras and face detectors hand on: frames stamped with their capture time, and faces.

Image coordinates are normalised: x from 0 (the image's left edge, as the camera sees the
scene, not mirrored) to 1 (its right), y from 0 (top) to 1 (bottom). A frame's ``t`` is its
capture time on the runtime clock (:mod:`anima.clock`), so a detection can be projected with
the head pose of that moment, not the pose when the detector finished (reachy_mini PR #1396:
the head pose *now* overshot 12–15°).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import numpy as np
from numpy.typing import NDArray

Image = NDArray[np.uint8]  # height × width × 3, RGB
# the head's pose (yaw, pitch[, roll], radians) at a time on the runtime clock: a camera that
# renders its scene for the head (the simulated one) films with it
PoseAt = Callable[[float], tuple[float, ...]]


@dataclass(frozen=True, kw_only=True, eq=False)
class VideoFrame:
    """One frame as the camera saw it."""

    image: Image  # height × width × 3 RGB, not mirrored
    t: float  # capture time on the runtime clock (seconds)
    index: int  # frames since the source started (0, 1, 2 …; a gap is a dropped frame)

    @property
    def width(self) -> int:
        return int(self.image.shape[1])

    @property
    def height(self) -> int:
        return int(self.image.shape[0])


class FrameSink(Protocol):
    """Where a camera sends its frames, from the camera's own thread."""

    def frame(self, frame: VideoFrame) -> None:
        """One frame; must return quickly (a slow sink drops frames, not the camera)."""

    def end(self, reason: str) -> None:
        """No more frames: the file ended, the camera was unplugged, or ``stop()``."""


@runtime_checkable
class Camera(Protocol):
    """A source of frames (``vision.source``): a real camera, a file, a simulated head camera."""

    name: str

    def start(self, sink: FrameSink) -> None:
        """Begin delivering frames to ``sink`` (a :class:`~anima.errors.ConfigError` naming the
        device when it cannot be opened)."""

    def stop(self, timeout: float = 1.0) -> None:
        """Stop delivering; idempotent; ``sink.end`` has been called when it returns."""


@dataclass(frozen=True)
class Box:
    """A rectangle in normalised image coordinates (``x0 < x1``, ``y0 < y1``)."""

    x0: float
    y0: float
    x1: float
    y1: float

    @property
    def center(self) -> tuple[float, float]:
        return ((self.x0 + self.x1) / 2, (self.y0 + self.y1) / 2)

    @property
    def width(self) -> float:
        return self.x1 - self.x0

    @property
    def height(self) -> float:
        return self.y1 - self.y0

    def iou(self, other: Box) -> float:
        """Intersection over union, 0 to 1."""
        w = min(self.x1, other.x1) - max(self.x0, other.x0)
        h = min(self.y1, other.y1) - max(self.y0, other.y0)
        if w <= 0 or h <= 0:
            return 0.0
        inter = w * h
        return inter / (self.width * self.height + other.width * other.height - inter)


@dataclass(frozen=True, kw_only=True)
class Face:
    """One face in one frame."""

    box: Box
    score: float  # the detector's confidence, 0 to 1
    # the detector's key points, normalised (BlazeFace: right eye, left eye, nose tip, mouth
    # centre, right ear, left ear — "right" as the person's own)
    keypoints: tuple[tuple[float, float], ...] = ()
    # from landmarks, when read: how far the face is turned from the camera (degrees; 0: it
    # faces the camera, positive: turned to the image's left), and the lips' gap over the
    # face's height (0: closed)
    yaw_deg: float | None = None
    mouth_open: float | None = None


@runtime_checkable
class FaceDetector(Protocol):
    """Faces in an image (``vision.faces``); landmarks filled in when the detector reads them."""

    name: str

    def detect(self, image: Image) -> list[Face]:
        """The faces in ``image`` (height × width × 3 RGB), surest first."""

    def close(self) -> None:
        """Free the model (idempotent)."""
