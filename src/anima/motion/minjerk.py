"""Minimum-jerk profiles: the smooth 0→1 ramps every blend and goto uses."""

from __future__ import annotations


def min_jerk(r: float) -> float:
    """The minimum-jerk ramp s(r) = 10r³ − 15r⁴ + 6r⁵, clamped to [0, 1].

    Zero velocity and acceleration at both ends: a move that starts or ends with it makes no
    step in position, velocity or acceleration.
    """
    if r <= 0.0:
        return 0.0
    if r >= 1.0:
        return 1.0
    r3 = r * r * r
    return r3 * (10.0 + r * (-15.0 + 6.0 * r))
