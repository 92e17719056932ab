"""Gaze kinematics: where a point is, and how head and eyes share the turn towards it.

Points are in metres in the **head frame**: the origin between the eyes with the head in its
neutral pose, **x forward, y to the robot's left, z up** (right-handed, as ROS REP-103). A
direction is (yaw, pitch) in radians with the engine's conventions: yaw > 0 turns left,
pitch > 0 tilts down (rotation about +y), so a point above the eyes has a negative pitch.

The eyes take small turns alone; beyond ``eye_only_rad`` the head takes ``head_share`` of the
turn and the eyes the rest, each within its channel's calibrated range. What neither can reach
is clamped to the nearest reachable direction and reported.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from anima.body.model import Body, Calibration, Role
from anima.errors import InvalidCommandError, NonFiniteValueError


@dataclass(frozen=True, kw_only=True)
class GazeSplit:
    """How a direction is shared between head and eyes (radians)."""

    head_yaw: float
    head_pitch: float
    eyes_yaw: float
    eyes_pitch: float
    clamped: bool  # the direction was out of reach: this is the nearest reachable one


def _range(body: Body, role: Role) -> tuple[float, float]:
    index = body.role_index(role)
    if index is None:
        return (0.0, 0.0)
    ch = body.channels[index]
    cal = ch.calibration
    if cal is None:
        return (0.0, 0.0)
    a, b = cal.to_radians(ch.min), cal.to_radians(ch.max)
    return (min(a, b), max(a, b))


def _clamp(v: float, lo_hi: tuple[float, float]) -> float:
    return min(max(v, lo_hi[0]), lo_hi[1])


class GazeKinematics:
    """Point → direction → head/eye split, within the body's calibrated ranges."""

    def __init__(self, body: Body, *, head_share: float = 0.7, eye_only_rad: float = 0.08) -> None:
        if not 0.0 <= head_share <= 1.0:
            raise InvalidCommandError(f"head_share must be in [0, 1], got {head_share}")
        self.body = body
        self.head_share = head_share
        self.eye_only_rad = eye_only_rad
        self.head_yaw_range = _range(body, Role.NECK_YAW)
        self.head_pitch_range = _range(body, Role.NECK_PITCH)
        self.eyes_yaw_range = _range(body, Role.EYES_YAW)
        self.eyes_pitch_range = _range(body, Role.EYES_PITCH)
        self.eye_calibrations: dict[str, Calibration] = {}
        for role in (Role.EYES_YAW, Role.EYES_PITCH):
            index = body.role_index(role)
            cal = None if index is None else body.channels[index].calibration
            if index is not None and cal is not None:
                self.eye_calibrations[body.channels[index].name] = cal

    @staticmethod
    def direction(x: float, y: float, z: float) -> tuple[float, float]:
        """(yaw, pitch) of a point in the head frame."""
        for label, v in (("x", x), ("y", y), ("z", z)):
            if not math.isfinite(v):
                raise NonFiniteValueError(f"look_at: {label} = {v!r} is not finite")
        if x == 0.0 and y == 0.0 and z == 0.0:
            raise InvalidCommandError("look_at: the point (0, 0, 0) is the eyes themselves")
        return math.atan2(y, x), -math.atan2(z, math.hypot(x, y))

    def split(self, yaw: float, pitch: float) -> GazeSplit:
        hy, ey, cy = self._axis(yaw, self.head_yaw_range, self.eyes_yaw_range)
        hp, ep, cp = self._axis(pitch, self.head_pitch_range, self.eyes_pitch_range)
        return GazeSplit(head_yaw=hy, head_pitch=hp, eyes_yaw=ey, eyes_pitch=ep, clamped=cy or cp)

    def _axis(
        self, angle: float, head: tuple[float, float], eyes: tuple[float, float]
    ) -> tuple[float, float, bool]:
        excess = max(0.0, abs(angle) - self.eye_only_rad)
        h = _clamp(math.copysign(excess * self.head_share, angle), head)
        e = _clamp(angle - h, eyes)
        if abs(angle - h - e) > 1e-9:  # the eyes are at their limit: let the head take more
            h = _clamp(angle - e, head)
        return h, e, abs(angle - h - e) > 1e-6

    def eye_deltas(self, eyes_yaw: float, eyes_pitch: float) -> dict[str | int, float]:
        """Eye angles (radians) as channel deltas in units, for an offset."""
        out: dict[str | int, float] = {}
        for name, cal in self.eye_calibrations.items():
            role = self.body.channel(name).role
            angle = eyes_yaw if role is Role.EYES_YAW else eyes_pitch
            out[name] = angle / cal.rad_per_unit
        return out
