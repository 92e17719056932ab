"""Where frames come from (``vision.source``, :data:`anima.config.vision.SOURCES`): one
:class:`~anima.vision.types.Camera` protocol, one maker per name.

Every maker has the same signature, ``make_<name>(config: VisionConfig, clock: Clock, *,
pose_at: PoseAt | None = None) -> Camera | None`` (None: no camera, ``vision.source: none``);
``pose_at`` is the head's pose at a time, which a camera that renders its scene for the head
films with (the simulated head camera of :mod:`anima.testing.head_camera`) and a real one
ignores (attention places its detections with the pose at their capture). A maker touches no
device: the camera opens on ``start(sink)``, delivers :class:`~anima.vision.types.VideoFrame`
objects stamped on ``clock`` from its own thread, each scaled to ``vision.width`` (aspect kept)
and RGB, and ends with ``sink.end(reason)``.

- ``camera``: :class:`~anima.vision.sources.camera.OpenCVCamera` (``vision.device``);
- ``video``: :class:`~anima.vision.sources.video.VideoPlayer` (``vision.video_in``), a video
  file or a folder of frames played at its own pace on the clock.

OpenCV is imported when a camera starts (the ``vision`` extra).
"""

from __future__ import annotations

from anima.clock import Clock
from anima.config.vision import VisionConfig
from anima.errors import ConfigError
from anima.vision.sources.camera import OpenCVCamera
from anima.vision.sources.video import VideoPlayer
from anima.vision.types import Camera, PoseAt

__all__ = ["OpenCVCamera", "VideoPlayer", "make_camera", "make_none", "make_video"]


def make_none(
    config: VisionConfig, clock: Clock, *, pose_at: PoseAt | None = None
) -> Camera | None:
    """No camera: nothing is seen."""
    return None


def make_camera(
    config: VisionConfig, clock: Clock, *, pose_at: PoseAt | None = None
) -> Camera | None:
    """A real camera, ``vision.device``, asked for ``vision.fps``."""
    return OpenCVCamera(
        config.device,
        clock=clock,
        fps=config.fps,
        width=config.width,
        mirrored=config.mirrored,
    )


def make_video(
    config: VisionConfig, clock: Clock, *, pose_at: PoseAt | None = None
) -> Camera | None:
    """``vision.video_in`` played at ``vision.video_fps``, else its own frame rate."""
    if not config.video_in:  # source: video without it is refused when the config loads
        raise ConfigError("vision.video_in: no video file or folder given", key="vision.video_in")
    return VideoPlayer(
        config.video_in,
        clock=clock,
        fps=config.video_fps,
        default_fps=config.fps,
        width=config.width,
        mirrored=config.mirrored,
    )
