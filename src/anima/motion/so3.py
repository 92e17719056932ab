"""Head orientation as rotations (unit quaternions), so offsets compose without Euler errors.

Convention: intrinsic Z-Y-X (yaw, then pitch, then roll), i.e. R = Rz(yaw)·Ry(pitch)·Rx(roll),
angles in radians. Plain floats: for one 3-DOF head this is several times faster than numpy.
"""

from __future__ import annotations

import math

Quat = tuple[float, float, float, float]  # (w, x, y, z)

IDENTITY: Quat = (1.0, 0.0, 0.0, 0.0)


def from_euler(roll: float, pitch: float, yaw: float) -> Quat:
    cr, sr = math.cos(roll * 0.5), math.sin(roll * 0.5)
    cp, sp = math.cos(pitch * 0.5), math.sin(pitch * 0.5)
    cy, sy = math.cos(yaw * 0.5), math.sin(yaw * 0.5)
    return (
        cr * cp * cy + sr * sp * sy,
        sr * cp * cy - cr * sp * sy,
        cr * sp * cy + sr * cp * sy,
        cr * cp * sy - sr * sp * cy,
    )


def multiply(a: Quat, b: Quat) -> Quat:
    """The rotation ``a ∘ b``: apply ``b`` first, then ``a`` (``a`` is a world-frame offset)."""
    aw, ax, ay, az = a
    bw, bx, by, bz = b
    return (
        aw * bw - ax * bx - ay * by - az * bz,
        aw * bx + ax * bw + ay * bz - az * by,
        aw * by - ax * bz + ay * bw + az * bx,
        aw * bz + ax * by - ay * bx + az * bw,
    )


def to_euler(q: Quat) -> tuple[float, float, float]:
    """(roll, pitch, yaw) of a unit quaternion; pitch is clamped at ±π/2 (gimbal lock)."""
    w, x, y, z = q
    n = math.sqrt(w * w + x * x + y * y + z * z)
    w, x, y, z = w / n, x / n, y / n, z / n
    roll = math.atan2(2.0 * (w * x + y * z), 1.0 - 2.0 * (x * x + y * y))
    s = 2.0 * (w * y - z * x)
    pitch = math.copysign(math.pi / 2, s) if abs(s) >= 1.0 else math.asin(s)
    yaw = math.atan2(2.0 * (w * z + x * y), 1.0 - 2.0 * (y * y + z * z))
    return roll, pitch, yaw
