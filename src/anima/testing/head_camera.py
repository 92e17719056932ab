"""A simulated head camera: a synthetic scene rendered for the robot's head pose (closed loop).

The camera films a :class:`~anima.testing.sim_scene.Scene` (people with real faces, scripted
over time, before a world-fixed background). It is a pinhole of ``vision.hfov_deg`` at
``vision.width`` × 3/4 of it, placed by ``vision.position_m`` and ``vision.rpy_deg``: on the head
(``mount: head``: it turns with the head pose it is given) or on the body (``fixed``). Frames
come on the runtime clock at ``vision.fps`` (``clock.sleep_until``: at CPU speed on
``FakeClock(autojump=True)``), each rendered for the head pose *at its capture time* and stamped
with that time; ``latency_s`` hands each frame on that long after its capture, as a real camera
and its USB link do.

Frames and signs: the robot frame is x forward, y left, z up (metres), its origin the head's
centre of rotation; a head pose is (yaw, pitch) in radians with the engine's conventions
(yaw > 0 turns left, pitch > 0 tilts down: :mod:`anima.body.gaze`), the camera's ``rpy_deg``
likewise (R = Rz·Ry·Rx, as :mod:`anima.motion.so3`); the image's x grows to the right (the
robot's right, for a camera looking forward) and its y downward, not mirrored. A point at
(x, y, z) in the lens's own frame lands at ``(w/2 - f·y/x, h/2 - f·z/x)`` pixels, with
``f = (w/2) / tan(hfov/2)``.

:meth:`SimHeadCamera.capture` renders one frame without a thread (a stepped closed loop calls it
on its own clock), and :meth:`SimHeadCamera.seen` tells where each face was drawn: the truth a
test or a benchmark measures against.
"""

from __future__ import annotations

import collections
import logging
import math
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from anima.errors import ConfigError
from anima.testing.pinhole import FloatArray, HeadPose, Pinhole, PoseAt
from anima.testing.sim_scene import (
    CROP_FACE_WIDTHS,
    FACE_WIDTH_M,
    Colour,
    Place,
    Scene,
    panorama,
)
from anima.vision.sources.opencv import load_cv2
from anima.vision.types import Box, FrameSink, Image, VideoFrame

if TYPE_CHECKING:
    from anima.attention.pose_history import PoseHistory
    from anima.clock import Clock
    from anima.config.vision import VisionConfig

log = logging.getLogger(__name__)

TRUTH_FRAMES = 256  # frames whose drawn faces seen() remembers


def _cv2() -> Any:
    return load_cv2()


# ---------------------------------------------------------------------------------- drawing
@dataclass(frozen=True, kw_only=True)
class SeenFace:
    """Where one person's face was drawn in a frame."""

    name: str
    box: Box  # the face itself (its width square around its centre), normalised, not clipped
    center: tuple[float, float]  # the face's centre, normalised (may lie outside [0, 1])
    depth_m: float  # along the lens's axis


class _Background:
    """The world behind the people, fixed in the world: it slides as the head turns."""

    def __init__(self, kind: str | Colour, lens: Pinhole) -> None:
        self._shape = (lens.height, lens.width, 3)
        self._plain: Image | None = None
        self._panorama: Image | None = None
        self._last: tuple[FloatArray, Image] | None = None
        if isinstance(kind, str):
            self._panorama = panorama(kind)
            self._rays = lens.rays()
        else:
            self._plain = np.empty(self._shape, np.uint8)
            self._plain[:] = np.array(kind, np.uint8)

    def view(self, orientation: FloatArray) -> Image:
        """A fresh image of the background as the lens sees it."""
        if self._plain is not None:
            return self._plain.copy()
        assert self._panorama is not None
        if self._last is not None and np.array_equal(self._last[0], orientation):
            return self._last[1].copy()  # the head has not moved
        world = self._rays @ orientation.T.astype(np.float32)
        az = np.arctan2(world[:, 1], world[:, 0])
        el = np.arcsin(np.clip(world[:, 2], -1.0, 1.0))
        ph, pw = self._panorama.shape[:2]
        u = ((-az / (2 * np.pi)) % 1.0 * pw).astype(np.intp) % pw  # azimuth grows leftward
        v = np.clip(((0.5 - el / np.pi) * ph).astype(np.intp), 0, ph - 1)
        image: Image = self._panorama[v, u].reshape(self._shape)
        self._last = (orientation.copy(), image)
        return image.copy()


class Renderer:
    """A scene as a lens sees it for a head pose at a time: the image and the faces drawn."""

    def __init__(self, scene: Scene, lens: Pinhole) -> None:
        self.scene = scene
        self.lens = lens
        self._background = _Background(scene.background, lens)
        self._cv2 = _cv2()

    def render(self, t: float, head: HeadPose) -> tuple[Image, list[SeenFace]]:
        lens = self.lens
        pose = lens.pose(head)
        image = self._background.view(pose[0])
        drawn: list[tuple[float, str, Place]] = []
        for name in self.scene.names:
            place = self.scene.place(name, t)
            if place is not None:
                drawn.append((place.distance_m, name, place))
        seen: list[SeenFace] = []
        for _, name, place in sorted(drawn, key=lambda d: -d[0]):  # the nearest drawn last
            face = self._draw(image, name, place, pose)
            if face is not None:
                seen.append(face)
        return image, seen

    def _draw(
        self,
        image: Image,
        name: str,
        place: Place,
        pose: tuple[FloatArray, FloatArray],
    ) -> SeenFace | None:
        """Paste ``name``'s face turned toward the robot's head; where, or None (unseen)."""
        lens = self.lens
        face = self.scene.face(name)
        az, el = math.radians(place.azimuth_deg), math.radians(place.elevation_deg)
        centre = place.point()
        right = np.array([math.sin(az), -math.cos(az), 0.0])  # the robot's right, facing it
        down = np.array([math.sin(el) * math.cos(az), math.sin(el) * math.sin(az), -math.cos(el)])
        fh, fw = face.shape[:2]
        metres_per_px = FACE_WIDTH_M * CROP_FACE_WIDTHS / fw
        half = fw / 4  # a lever long enough for the affine map, short enough to stay planar
        points = [
            centre,
            centre + right * half * metres_per_px,
            centre + down * half * metres_per_px,
        ]
        at, along_x, along_y = (lens.project(p, pose) for p in points)
        if at is None or along_x is None or along_y is None:
            return None  # behind the lens
        (cx, cy, depth), (rx, ry, _), (dx, dy, _) = at, along_x, along_y
        # the face's four corners in the image: drawn only if that quad meets the frame
        ax, ay = (rx - cx) / half, (ry - cy) / half  # one source pixel along the face's x
        bx, by = (dx - cx) / half, (dy - cy) / half  # and along its y
        corners_x = [cx + sx * fw / 2 * ax + sy * fh / 2 * bx for sx in (-1, 1) for sy in (-1, 1)]
        corners_y = [cy + sx * fw / 2 * ay + sy * fh / 2 * by for sx in (-1, 1) for sy in (-1, 1)]
        if (
            max(corners_x) <= 0
            or min(corners_x) >= lens.width
            or max(corners_y) <= 0
            or min(corners_y) >= lens.height
        ):
            return None
        # source pixel (i, j) has its centre at (j + 0.5, i + 0.5); so does the image's
        c0 = (fw / 2 - 0.5, fh / 2 - 0.5)
        src = np.array([c0, (c0[0] + half, c0[1]), (c0[0], c0[1] + half)], np.float32)
        dst = np.array(
            [(cx - 0.5, cy - 0.5), (rx - 0.5, ry - 0.5), (dx - 0.5, dy - 0.5)], np.float32
        )
        cv2 = self._cv2
        matrix = cv2.getAffineTransform(src, dst)
        cv2.warpAffine(
            face,
            matrix,
            (lens.width, lens.height),
            dst=image,
            flags=cv2.INTER_LINEAR,
            borderMode=cv2.BORDER_TRANSPARENT,
        )
        w, h = lens.width, lens.height
        half_face = math.hypot(ax, ay) * fw / CROP_FACE_WIDTHS / 2  # pixels
        return SeenFace(
            name=name,
            box=Box(
                float(cx - half_face) / w,
                float(cy - half_face) / h,
                float(cx + half_face) / w,
                float(cy + half_face) / h,
            ),
            center=(float(cx) / w, float(cy) / h),
            depth_m=depth,
        )


# ---------------------------------------------------------------------------------- the camera
class SimHeadCamera:
    """A :class:`~anima.vision.types.Camera` filming a :class:`Scene` from the robot's head.

    ``pose_at(t)``: the head's (yaw, pitch) or (yaw, pitch, roll) at ``t`` on the runtime
    clock (from the driver's sent frames: :mod:`anima.attention.pose_history`); None: the head
    never moves. ``latency_s``: each frame reaches the sink that long after its capture
    (rendered for the pose at capture, and stamped with it)."""

    name = "sim"

    def __init__(
        self,
        scene: Scene,
        lens: Pinhole,
        clock: Clock,
        *,
        fps: float = 15.0,
        pose_at: PoseAt | None = None,
        latency_s: float = 0.0,
    ) -> None:
        if not (math.isfinite(fps) and fps > 0):
            raise ConfigError(f"sim camera: fps must be > 0, got {fps!r}")
        if not (math.isfinite(latency_s) and 0 <= latency_s <= 10):
            raise ConfigError(f"sim camera: latency_s must be in [0, 10] s, got {latency_s!r}")
        self.scene = scene
        self.lens = lens
        self.fps = fps
        self.latency_s = latency_s
        self._clock = clock
        self._pose_at: PoseAt = pose_at or (lambda _t: (0.0, 0.0))
        self._renderer = Renderer(scene, lens)
        self._truth: collections.OrderedDict[int, tuple[SeenFace, ...]] = collections.OrderedDict()
        self._truth_lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._sink: FrameSink | None = None
        self._ended = False
        self._end_lock = threading.Lock()

    # ------------------------------------------------------------------ one frame, no thread
    def capture(self, t: float, index: int = 0) -> VideoFrame:
        """The frame captured at ``t``: the scene at ``t`` seen with the head pose at ``t``."""
        image, seen = self._renderer.render(t, self._pose_at(t))
        with self._truth_lock:
            self._truth[index] = tuple(seen)
            while len(self._truth) > TRUTH_FRAMES:
                self._truth.popitem(last=False)
        return VideoFrame(image=image, t=t, index=index)

    def seen(self, frame: VideoFrame | int) -> tuple[SeenFace, ...]:
        """The faces drawn in a recent frame (by the frame or its index), nearest last."""
        index = frame if isinstance(frame, int) else frame.index
        with self._truth_lock:
            return self._truth.get(index, ())

    # ------------------------------------------------------------------ the Camera protocol
    def start(self, sink: FrameSink) -> None:
        if self._thread is not None:
            raise RuntimeError("sim camera: already started")
        self._sink = sink
        self._ended = False
        self._stop.clear()
        self._thread = threading.Thread(
            target=self._run, args=(sink,), name="anima-sim-camera", daemon=True
        )
        self._thread.start()

    def stop(self, timeout: float = 1.0) -> None:
        self._stop.set()
        thread, self._thread = self._thread, None
        if thread is not None:
            thread.join(timeout)
            if thread.is_alive():
                log.warning("sim camera: its thread did not stop within %.1f s", timeout)
        if self._sink is not None:
            self._end(self._sink, "stopped")

    def _end(self, sink: FrameSink, reason: str) -> None:
        with self._end_lock:
            if self._ended:
                return
            self._ended = True
        sink.end(reason)

    def _run(self, sink: FrameSink) -> None:
        period = 1.0 / self.fps
        clock = self._clock
        next_capture = clock.now()
        index = 0
        pending: collections.deque[VideoFrame] = collections.deque()  # captured, not handed on
        try:
            while not self._stop.is_set():
                due = next_capture
                if pending:
                    due = min(due, pending[0].t + self.latency_s)
                if not clock.sleep_until(due, self._stop) or self._stop.is_set():
                    break
                now = clock.now()
                while pending and pending[0].t + self.latency_s <= now:
                    sink.frame(pending.popleft())
                if now < next_capture:
                    continue
                frame = self.capture(now, index)
                # a late wake skips the captures it missed: their indices are left as a gap
                missed = math.floor((now - next_capture) / period)
                next_capture += (missed + 1) * period
                index += missed + 1
                if self.latency_s > 0:
                    pending.append(frame)
                else:
                    sink.frame(frame)
        except Exception as exc:  # a broken scene or sink ends the stream, never silently
            log.exception("sim camera: stopped by an error")
            self._end(sink, f"error: {exc}")
            return
        self._end(sink, "stopped")


def pose_of(poses: PoseHistory) -> PoseAt:
    """``pose_at`` from attention's head-pose history (the frames the engine sent): what a
    runtime with ``vision.source: sim`` films with. Before the first frame, the head at rest."""
    return poses.head_at


def make_sim_camera(
    config: VisionConfig,
    clock: Clock,
    *,
    scene: Scene | None = None,
    pose_at: PoseAt | None = None,
    latency_s: float = 0.0,
) -> SimHeadCamera:
    """``vision.source: sim``: the simulated head camera of ``config`` (its width, field of
    view, mount and fps). Without a ``scene``, one person straight ahead at 1 m."""
    if scene is None:
        scene = Scene()
        scene.add("astronaut", 0.0)
    return SimHeadCamera(
        scene,
        Pinhole.from_config(config),
        clock,
        fps=config.fps,
        pose_at=pose_at,
        latency_s=latency_s,
    )
