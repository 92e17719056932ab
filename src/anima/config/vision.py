"""Social attention's configuration: the ``vision`` section (a camera and its faces) and the
``attention`` section (where the robot looks). Frozen, keyword-only, validated on creation.

Nothing runs without a camera: ``vision.source: none`` (the default) starts no vision thread,
and ``attention`` then follows voices only (when ``listen.mics`` declares an array) or nothing.

The part names are checked here against registries that hold only strings (as
:mod:`anima.config.speech_parts` does): loading a config imports neither OpenCV nor a model.
Angles a user writes are in degrees; the robot frame is x forward, y left, z up (metres).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from anima.config.bounds import rate, seconds
from anima.errors import ConfigError
from anima.registry import Registry

# vision.source: where frames come from (one Camera protocol, anima.vision.sources)
SOURCES = Registry(
    "vision.source",
    {
        "none": "anima.vision.sources:make_none",
        "camera": "anima.vision.sources:make_camera",  # a real camera (OpenCV, the vision extra)
        "video": "anima.vision.sources:make_video",  # a video file or a folder of frames
        "sim": "anima.testing.head_camera:make_sim_camera",  # a synthetic scene, closed loop
    },
)

# vision.faces: the face detector (one FaceDetector protocol, anima.vision.faces)
DETECTORS = Registry(
    "vision.faces",
    {
        "auto": "anima.vision.faces:make_auto",  # blazeface, else haar with a warning
        "blazeface": "anima.vision.faces:make_blazeface",
        "haar": "anima.vision.faces:make_haar",
    },
)

MOUNTS = ("head", "fixed")


def check_mount(mount: str, key: str) -> None:
    """``mount`` is one of :data:`MOUNTS`; ``key`` names the setting in the refusal."""
    if mount not in MOUNTS:
        raise ConfigError(f"{key} must be one of {', '.join(MOUNTS)}, got {mount!r}", key=key)


def check_hfov(hfov_deg: float, key: str) -> None:
    """A horizontal field of view in [10, 180] degrees (past it, a typo: no lens is that)."""
    if not (math.isfinite(hfov_deg) and 10 <= hfov_deg <= 180):
        raise ConfigError(f"{key} must be in [10, 180] degrees, got {hfov_deg!r}", key=key)


def check_vector(key: str, value: tuple[float, ...], limit: float, unit: str) -> None:
    """Three finite numbers within ±``limit`` (a camera's position in m, its angles in °)."""
    if len(value) != 3:
        raise ConfigError(f"{key} must be 3 numbers, got {len(value)}", key=key)
    for v in value:
        if not (math.isfinite(v) and abs(v) <= limit):
            raise ConfigError(
                f"{key} must be 3 numbers within ±{limit:g} {unit}, got {list(value)}", key=key
            )


@dataclass(frozen=True, kw_only=True)
class CameraGeometry:
    """Where the camera is and how wide it sees: the figures attention's geometry uses.

    A body may declare its camera (``[camera]`` in its definition, ``docs/body.md``); each
    ``vision`` key the user sets wins over it (:meth:`VisionConfig.geometry`). The defaults
    are a webcam's on the head, 5 cm before the head's centre, looking straight ahead.
    """

    mount: str = "head"  # head: the camera turns with the head; fixed: on the body or a stand
    hfov_deg: float = 65.0  # the camera's horizontal field of view (degrees)
    # the camera's position (m) and roll, pitch, yaw (degrees) in the head frame when mounted
    # on the head, else in the robot frame
    position_m: tuple[float, float, float] = (0.05, 0.0, 0.0)
    rpy_deg: tuple[float, float, float] = (0.0, 0.0, 0.0)

    def __post_init__(self) -> None:
        check_mount(self.mount, "[camera] mount")  # named as in a body's definition
        check_hfov(self.hfov_deg, "[camera] hfov_deg")
        check_vector("[camera] position_m", self.position_m, 5.0, "m")
        check_vector("[camera] rpy_deg", self.rpy_deg, 180.0, "degrees")


GEOMETRY_KEYS = ("mount", "hfov_deg", "position_m", "rpy_deg")  # vision's keys of the camera's


def _device(device: int | str) -> None:
    index = isinstance(device, int) and not isinstance(device, bool) and 0 <= device < 1000
    path = isinstance(device, str) and bool(device.strip()) and device == device.strip()
    if not (index or path):
        raise ConfigError(
            f"vision.device must be a camera's index (0, 1 …) or a device path, got {device!r}",
            key="vision.device",
        )


@dataclass(frozen=True, kw_only=True)
class VisionConfig:
    source: str = "none"  # none | camera | video | sim (SOURCES); none: no vision thread
    # camera: an OpenCV index (0: the first camera; YAML 0 or "0") or a device path
    device: int | str = 0
    video_in: str | None = None  # video: a video file or a folder of frames (--video-in)
    fps: float = 15.0  # frames a second asked of the camera; a folder of frames' pace
    # video: play a file at this pace (--video-fps); None: the file's own frame rate
    video_fps: float | None = None
    width: int = 320  # frames are scaled to this width for the face detector (pixels)
    # the camera's model and pose (CameraGeometry); None: the body's [camera]'s, else the default
    mount: str | None = None  # head: the camera turns with the head; fixed: on a body or stand
    hfov_deg: float | None = None  # the horizontal field of view (degrees); default 65
    # position (m) and roll, pitch, yaw (degrees) in the head frame when mounted on the head,
    # else in the robot frame; default (0.05, 0, 0) and (0, 0, 0)
    position_m: tuple[float, float, float] | None = None
    rpy_deg: tuple[float, float, float] | None = None
    mirrored: bool = False  # the source gives mirror images (a webcam's preview): unmirror them
    faces: str = "auto"  # auto | blazeface | haar (DETECTORS)
    # the detector in a process of its own: its Python never holds the loop's interpreter lock
    # (in-process, vision made the loop's tick-lateness p99 1.6-2.7x; docs/attention.md)
    process: bool = True
    landmarks: bool = True  # the face mesh: where a face looks and whether its mouth moves
    # with landmarks: the detector on every n-th frame, the face mesh alone following the faces
    # it found on the frames between (one model a frame, not two; a face the mesh loses is
    # looked for at once); 1: the detector and the mesh on every frame
    detect_every: int = 2
    min_face_score: float = 0.6  # detections less sure than this (0-1) are dropped

    def __post_init__(self) -> None:
        SOURCES.check(self.source)
        DETECTORS.check(self.faces)
        if self.mount is not None:
            check_mount(self.mount, "vision.mount")
        if self.source == "video" and not self.video_in:
            raise ConfigError(
                "vision.source: video needs vision.video_in (a video file or a folder of "
                "frames; anima serve --video-in PATH)",
                key="vision.video_in",
            )
        rate("vision", 120, lowest=0.1, fps=self.fps)
        if self.video_fps is not None:
            rate("vision", 120, lowest=0.1, video_fps=self.video_fps)
        _device(self.device)
        if isinstance(self.device, str) and self.device.strip().isdigit():
            object.__setattr__(self, "device", int(self.device))  # ANIMA_VISION__DEVICE=0
        if not 32 <= self.width <= 4096:
            raise ConfigError(
                f"vision.width must be in [32, 4096] pixels, got {self.width}", key="vision.width"
            )
        if self.hfov_deg is not None:
            check_hfov(self.hfov_deg, "vision.hfov_deg")
        if self.position_m is not None:
            check_vector("vision.position_m", self.position_m, 5.0, "m")
        if self.rpy_deg is not None:
            check_vector("vision.rpy_deg", self.rpy_deg, 180.0, "degrees")
        if isinstance(self.detect_every, bool) or not 1 <= self.detect_every <= 10:
            raise ConfigError(
                f"vision.detect_every must be a whole number of frames in [1, 10], got "
                f"{self.detect_every!r}",
                key="vision.detect_every",
            )
        if not (math.isfinite(self.min_face_score) and 0 <= self.min_face_score <= 1):
            raise ConfigError(
                f"vision.min_face_score must be in [0, 1], got {self.min_face_score!r}",
                key="vision.min_face_score",
            )

    @property
    def enabled(self) -> bool:
        return self.source != "none"

    def geometry(self, body: CameraGeometry | None = None) -> CameraGeometry:
        """The camera in effect: each of ``mount``, ``hfov_deg``, ``position_m`` and
        ``rpy_deg`` the user set, else the body's camera's (``body``, its ``[camera]``), else
        :class:`CameraGeometry`'s default."""
        base = body if body is not None else CameraGeometry()
        given = {k: getattr(self, k) for k in GEOMETRY_KEYS if getattr(self, k) is not None}
        return replace(base, **given) if given else base

    def on_body(self, body: CameraGeometry | None) -> VisionConfig:
        """This config with the four camera keys set to what is in effect on a body whose
        camera is ``body`` (None: a body that declares none)."""
        g = self.geometry(body)
        return replace(
            self, mount=g.mount, hfov_deg=g.hfov_deg, position_m=g.position_m, rpy_deg=g.rpy_deg
        )


@dataclass(frozen=True, kw_only=True)
class AttentionConfig:
    enabled: bool = True  # follow people (with a camera or a microphone array; else idle)
    faces: bool = True  # look at faces the camera sees
    voices: bool = True  # turn toward where a voice comes from (listen.mics, daemon_voice)
    switch_s: float = 1.5  # a new target must win this long before the gaze moves to it
    glance_s: float = 1.2  # a voice with no face seen: a glance this long toward it
    lost_s: float = 1.0  # a person unseen this long is dropped (brief occlusions keep the id)
    resume_s: float = 2.0  # after a commanded gaze or a head animation, attention waits this
    idle_glances: bool = True  # glance around now and then when nobody is there
    latency_compensation: bool = True  # project each detection with the head pose at capture
    # with driver.type reachy_mini and no listen.mics: the voices its daemon's own array hears
    daemon_voice: bool = True

    def __post_init__(self) -> None:
        seconds("attention", 60, switch_s=self.switch_s)
        seconds("attention", 60, glance_s=self.glance_s)
        seconds("attention", 60, lost_s=self.lost_s)
        seconds("attention", 600, resume_s=self.resume_s)
