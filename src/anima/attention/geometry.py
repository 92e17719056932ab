"""From a face in an image to a direction in the robot's frame, and back.

Frames (metres, right-handed, as ROS REP-103):

* **robot frame**: x forward, y to the robot's left, z up; its origin is the head frame's
  (between the eyes with the head at rest). A direction is (azimuth, elevation) in radians:
  azimuth from x toward y (positive: the robot's left), elevation above the x–y plane.
* **head frame**: the robot frame turned by the head's pose (roll, pitch, yaw of the head
  channels, R = Rz(yaw)·Ry(pitch)·Rx(roll); pitch > 0 tilts down). The head is taken to turn
  about the head frame's origin: a neck pivot a few centimetres lower changes a direction by
  well under a degree at a conversation's distance.
* **camera frame**: x along the optical axis, y to the image's left, z to the image's top; set
  on the head (``vision.mount: head``) or the body (``fixed``) at ``vision.position_m`` turned by
  ``vision.rpy_deg`` (roll, pitch, yaw in degrees, the same composition); a key not set is the
  body's ``[camera]``'s, else the default.
* **image**: normalised, x from 0 (left edge) to 1 (right), y from 0 (top) to 1 (bottom), as the
  camera sees the scene (not mirrored). So the image's right is the robot's right (negative
  azimuth) for a forward-looking camera, and the image's top is up.

The camera is a pinhole with square pixels: its focal length in pixels is
``(width / 2) / tan(hfov / 2)``. A face's distance is estimated from its width (a typical face is
``FACE_WIDTH_M`` wide): only the parallax of a camera away from the head's centre needs it, so a
rough value is enough.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from anima.attention.pose_history import HeadPose
from anima.config.vision import CameraGeometry, VisionConfig
from anima.vision.types import Box

FACE_WIDTH_M = 0.16  # a typical adult face's width, ear to ear less the ears (m)
DEFAULT_DISTANCE_M = 1.2  # when a face's size says nothing (a zero-width box)

Vector = NDArray[np.float64]


def rotation(roll: float, pitch: float, yaw: float) -> Vector:
    """The 3×3 matrix Rz(yaw)·Ry(pitch)·Rx(roll) (radians), as :mod:`anima.motion.so3`."""
    cr, sr = math.cos(roll), math.sin(roll)
    cp, sp = math.cos(pitch), math.sin(pitch)
    cy, sy = math.cos(yaw), math.sin(yaw)
    return np.array(
        [
            [cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr],
            [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr],
            [-sp, cp * sr, cp * cr],
        ]
    )


def head_rotation(pose: HeadPose | None) -> Vector:
    if pose is None:
        return np.eye(3)
    return rotation(pose.roll, pose.pitch, pose.yaw)


def direction_of(point: Vector) -> tuple[float, float]:
    """(azimuth, elevation) of a point in the robot frame (radians)."""
    x, y, z = (float(v) for v in point)
    return math.atan2(y, x), math.atan2(z, math.hypot(x, y))


def point_at(azimuth: float, elevation: float, distance: float) -> Vector:
    """The point ``distance`` metres away in direction (azimuth, elevation)."""
    ce = math.cos(elevation)
    return distance * np.array(
        [ce * math.cos(azimuth), ce * math.sin(azimuth), math.sin(elevation)]
    )


def from_head(azimuth: float, elevation: float, head: HeadPose | None) -> tuple[float, float]:
    """A direction in the head's frame (an array on the head heard it there), turned into the
    robot frame by the head's pose ``head`` (None: the head at rest)."""
    if head is None:
        return azimuth, elevation
    return direction_of(head_rotation(head) @ point_at(azimuth, elevation, 1.0))


@dataclass(frozen=True, slots=True)
class Sighting:
    """Where a face is in the robot frame."""

    azimuth: float  # radians, positive: the robot's left
    elevation: float  # radians, positive: up
    distance: float  # metres from the head's centre (estimated from the face's size)


class CameraModel:
    """The camera of a :class:`~anima.config.vision.VisionConfig`: a pinhole at its pose
    (:meth:`~anima.config.vision.VisionConfig.geometry`: the keys set, else ``body``'s camera's,
    else the defaults)."""

    def __init__(self, vision: VisionConfig, body: CameraGeometry | None = None) -> None:
        camera = vision.geometry(body)
        self.mount = camera.mount
        self.hfov = math.radians(camera.hfov_deg)
        self._tan = math.tan(self.hfov / 2.0)
        self.position = np.array(camera.position_m, dtype=np.float64)
        roll, pitch, yaw = (math.radians(a) for a in camera.rpy_deg)
        self.rotation = rotation(roll, pitch, yaw)  # camera → head (or robot, when fixed)

    def focal(self, width: int) -> float:
        """The focal length in pixels for an image ``width`` pixels wide."""
        return (width / 2.0) / self._tan

    def ray(self, x: float, y: float, width: int, height: int) -> Vector:
        """The unit ray through normalised image point (x, y), in the camera frame."""
        f = self.focal(width)
        v = np.array([f, -(x - 0.5) * width, -(y - 0.5) * height])
        return v / float(np.linalg.norm(v))

    def distance(self, box: Box, width: int) -> float:
        """How far a face of box ``box`` is from the camera (metres, from its width)."""
        pixels = box.width * width
        if not pixels > 0.0:
            return DEFAULT_DISTANCE_M
        return FACE_WIDTH_M * self.focal(width) / pixels

    def sight(self, box: Box, width: int, height: int, head: HeadPose | None) -> Sighting:
        """A face's direction in the robot frame, its frame seen with the head at ``head``
        (ignored for a fixed camera; None: the head at rest)."""
        x, y = box.center
        d = self.distance(box, width)
        in_mount = self.position + d * (self.rotation @ self.ray(x, y, width, height))
        point = head_rotation(head) @ in_mount if self.mount == "head" else in_mount
        azimuth, elevation = direction_of(point)
        return Sighting(azimuth, elevation, float(np.linalg.norm(point)))

    def project(
        self, point: Vector, head: HeadPose | None, width: int, height: int
    ) -> tuple[float, float] | None:
        """Where a robot-frame point lands in the image (normalised x, y), or None when it is
        behind the camera: the inverse of :meth:`sight` (for simulated cameras and tests)."""
        in_mount = head_rotation(head).T @ point if self.mount == "head" else point
        c = self.rotation.T @ (in_mount - self.position)
        if c[0] <= 1e-9:
            return None
        f = self.focal(width)
        return (
            0.5 - f * float(c[1]) / float(c[0]) / width,
            0.5 - f * float(c[2]) / float(c[0]) / height,
        )

    def size_at(self, distance: float, width: int) -> float:
        """The normalised width of a typical face ``distance`` metres from the camera."""
        return FACE_WIDTH_M * self.focal(width) / max(distance, 1e-6) / width
