"""The simulated head camera's lens: a pinhole of ``vision.hfov_deg`` placed on the head or the
body (:class:`Pinhole`), with the head pose's rotation (:func:`rotation`). Signs and the
projection formula: :mod:`anima.testing.head_camera`."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray

from anima.vision.types import PoseAt

__all__ = ["NEAR_M", "FloatArray", "HeadPose", "Pinhole", "PoseAt", "rotation"]

if TYPE_CHECKING:
    from anima.config.vision import VisionConfig

NEAR_M = 0.05  # nothing nearer the lens than this is drawn (it would fill the frame)

HeadPose = tuple[float, ...]  # (yaw, pitch) or (yaw, pitch, roll) of the head, radians
FloatArray = NDArray[np.float64]


def rotation(roll: float, pitch: float, yaw: float) -> FloatArray:
    """R = Rz(yaw)·Ry(pitch)·Rx(roll) (radians), as :mod:`anima.motion.so3`."""
    cr, sr = math.cos(roll), math.sin(roll)
    cp, sp = math.cos(pitch), math.sin(pitch)
    cy, sy = math.cos(yaw), math.sin(yaw)
    rz = np.array([[cy, -sy, 0.0], [sy, cy, 0.0], [0.0, 0.0, 1.0]])
    ry = np.array([[cp, 0.0, sp], [0.0, 1.0, 0.0], [-sp, 0.0, cp]])
    rx = np.array([[1.0, 0.0, 0.0], [0.0, cr, -sr], [0.0, sr, cr]])
    out: FloatArray = rz @ ry @ rx
    return out


@dataclass(frozen=True, eq=False)
class Pinhole:
    """The simulated lens and where it sits: pixels are continuous, the image spans
    [0, width] × [0, height], its centre is the optical axis."""

    width: int
    height: int
    focal_px: float  # from the horizontal field of view: (width / 2) / tan(hfov / 2)
    head_mounted: bool  # True: the pose below is in the head frame, and turns with the head
    position: FloatArray  # the lens's centre (metres)
    orientation: FloatArray  # its axes as columns: forward, left, up

    @classmethod
    def from_config(cls, config: VisionConfig) -> Pinhole:
        width = config.width
        camera = config.geometry()  # the keys set (the runtime's: those in effect on its body)
        roll, pitch, yaw = (math.radians(a) for a in camera.rpy_deg)
        return cls(
            width=width,
            height=round(width * 3 / 4),
            focal_px=(width / 2) / math.tan(math.radians(camera.hfov_deg) / 2),
            head_mounted=camera.mount == "head",
            position=np.array(camera.position_m, dtype=float),
            orientation=rotation(roll, pitch, yaw),
        )

    def pose(self, head: HeadPose) -> tuple[FloatArray, FloatArray]:
        """The lens's orientation and position in the robot frame, for a head pose."""
        if not self.head_mounted:
            return self.orientation, self.position
        r_head = rotation(head[2] if len(head) > 2 else 0.0, head[1], head[0])
        return r_head @ self.orientation, r_head @ self.position

    def project(
        self, point: FloatArray, pose: tuple[FloatArray, FloatArray]
    ) -> tuple[float, float, float] | None:
        """A point of the robot frame → (x, y) in pixels and its depth along the axis (metres);
        None when it is behind the lens or nearer than :data:`NEAR_M`."""
        orientation, position = pose
        q = orientation.T @ (point - position)
        if q[0] < NEAR_M:
            return None
        return (
            self.width / 2 - self.focal_px * q[1] / q[0],
            self.height / 2 - self.focal_px * q[2] / q[0],
            float(q[0]),
        )

    def rays(self) -> NDArray[np.float32]:
        """Each pixel's viewing direction in the lens's frame, unit length, (height·width) × 3."""
        xs = (np.arange(self.width) + 0.5 - self.width / 2) / self.focal_px
        ys = (np.arange(self.height) + 0.5 - self.height / 2) / self.focal_px
        gx, gy = np.meshgrid(xs, ys)
        rays = np.stack([np.ones_like(gx), -gx, -gy], axis=-1).reshape(-1, 3)
        out: NDArray[np.float32] = (rays / np.linalg.norm(rays, axis=1, keepdims=True)).astype(
            np.float32
        )
        return out
