"""The head's pose over time, from the frames the driver was sent.

A detection must be projected with the head pose *when its frame was captured*, not the pose
when the detector finished: the head turns meanwhile, and the pose "now" overshoots by the turn
made during the frame's latency (reachy_mini PR #1396 measured 12–15°). So every frame the
engine hands its driver is kept here for a few seconds, converted to angles, and :meth:`at`
interpolates the pose at any recent time.

The angles follow the body's calibrations (``radians = (value − zero) · rad_per_unit``) and the
engine's conventions: roll, pitch, yaw of the head (yaw > 0 turns left, pitch > 0 tilts down,
composed as R = Rz(yaw)·Ry(pitch)·Rx(roll), :mod:`anima.motion.so3`) and the eyes' yaw and
pitch on top of it. A channel the body lacks reads 0.

What is kept is what was *sent*. A driver that reads its robot back
(:class:`~anima.drivers.feedback.Measuring`) measures how long the robot takes to reach a
commanded pose (``Feedback.lag_s``, the median of recent moves); the history then answers
:meth:`at` with the pose sent ``lag_s`` earlier, which is where the head really was. The
readings themselves are not used: they are stamped on ``time.monotonic`` rather than the
runtime clock, arrive at a lower rate, and are noisy, while the sent frames are exact and at
the loop's rate; the lag is the part of the measurement that matters for projection.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from anima.body import Body, FloatArray, Role
from anima.drivers.base import Frame
from anima.drivers.feedback import Measuring

_ROLES = (Role.NECK_ROLL, Role.NECK_PITCH, Role.NECK_YAW, Role.EYES_YAW, Role.EYES_PITCH)
TAP = "attention.pose"  # the frame tap's name on the engine

Lag = Callable[[], float | None]


@dataclass(frozen=True, slots=True)
class HeadPose:
    """Where the head and eyes pointed at ``t`` (radians, the engine's conventions)."""

    t: float
    roll: float = 0.0
    pitch: float = 0.0  # > 0: tilted down
    yaw: float = 0.0  # > 0: turned left
    eyes_yaw: float = 0.0
    eyes_pitch: float = 0.0

    @property
    def gaze(self) -> tuple[float, float]:
        """(yaw, pitch) of the eyes' line of sight: the head's turn plus the eyes' (small
        angles; roll ignored)."""
        return (self.yaw + self.eyes_yaw, self.pitch + self.eyes_pitch)


def measured_lag(driver: object) -> Lag | None:
    """The driver's measured command → position lag, as :class:`PoseHistory` takes it; None for
    a driver that does not read its robot back."""
    if not isinstance(driver, Measuring):
        return None

    def lag() -> float | None:
        fb = driver.feedback()
        return None if fb is None else fb.lag_s

    return lag


class PoseHistory:
    """A ring of recent head poses (``seconds`` at ``rate_hz``), fed by the engine's frame tap.

    :meth:`tap` runs on the motion thread each tick: a few multiplications and one row written
    under an uncontended lock. :meth:`at` runs on the vision thread.
    """

    def __init__(
        self,
        body: Body,
        *,
        seconds: float = 4.0,
        rate_hz: float = 100.0,
        lag: Lag | None = None,
    ) -> None:
        self._size = max(8, round(seconds * rate_hz))
        self._rows = np.zeros((self._size, 1 + len(_ROLES)))  # t, then the five angles
        self._next = 0
        self._count = 0
        self._lock = threading.Lock()
        self._lag = lag
        # (column, channel index, zero, rad per unit) for each role the body has
        self._columns: list[tuple[int, int, float, float]] = []
        for column, role in enumerate(_ROLES, start=1):
            index = body.role_index(role)
            cal = None if index is None else body.channels[index].calibration
            if index is not None and cal is not None:
                self._columns.append((column, index, cal.zero, cal.rad_per_unit))

    # --- the motion thread --------------------------------------------------------------------
    def tap(self, frame: Frame) -> None:
        """The engine's frame tap: keep the pose this frame commands."""
        self.add(frame.t, frame.values)

    def add(self, t: float, values: FloatArray) -> None:
        with self._lock:
            row = self._rows[self._next]
            row[0] = t
            for column, index, zero, scale in self._columns:
                row[column] = (values[index] - zero) * scale
            self._next = (self._next + 1) % self._size
            self._count = min(self._count + 1, self._size)

    # --- any thread ---------------------------------------------------------------------------
    def pose_of(self, t: float, values: FloatArray) -> HeadPose:
        """The pose a frame of channel values commands (no history involved)."""
        angles = [0.0] * len(_ROLES)
        for column, index, zero, scale in self._columns:
            angles[column - 1] = (float(values[index]) - zero) * scale
        return HeadPose(t, *angles)

    def __len__(self) -> int:
        return self._count

    def clear(self) -> None:
        with self._lock:
            self._count = 0
            self._next = 0

    def lag_s(self) -> float:
        """The driver's measured lag now (0 when it measures none)."""
        if self._lag is None:
            return 0.0
        lag = self._lag()
        return 0.0 if lag is None or not lag > 0.0 else min(float(lag), 1.0)

    def _ordered(self) -> FloatArray:
        with self._lock:
            n, i = self._count, self._next
            if n < self._size:
                return self._rows[:n].copy()
            return np.concatenate((self._rows[i:], self._rows[:i]))

    def latest(self) -> HeadPose | None:
        """The newest pose sent (shifted by the driver's lag like :meth:`at`); None when empty."""
        with self._lock:
            if self._count == 0:
                return None
            t = float(self._rows[(self._next - 1) % self._size, 0])
        return self.at(t)

    def at(self, t: float) -> HeadPose | None:
        """The pose at runtime-clock time ``t``, interpolated between the frames around it
        (the oldest or newest kept when ``t`` is outside the history); None when empty."""
        rows = self._ordered()
        if len(rows) == 0:
            return None
        when = t - self.lag_s()
        times = rows[:, 0]
        k = int(np.searchsorted(times, when))
        if k <= 0:
            values = rows[0, 1:]
        elif k >= len(rows):
            values = rows[-1, 1:]
        else:
            t0, t1 = times[k - 1], times[k]
            w = 0.0 if t1 <= t0 else (when - t0) / (t1 - t0)
            values = rows[k - 1, 1:] * (1.0 - w) + rows[k, 1:] * w
        roll, pitch, yaw, eyes_yaw, eyes_pitch = (float(v) for v in values)
        return HeadPose(t, roll, pitch, yaw, eyes_yaw, eyes_pitch)

    def head_at(self, t: float) -> tuple[float, float, float]:
        """The head's (yaw, pitch, roll) at ``t``, at rest before the first frame: what a
        camera on the head films with (the simulated head camera's ``pose_at``)."""
        pose = self.at(t)
        return (0.0, 0.0, 0.0) if pose is None else (pose.yaw, pose.pitch, pose.roll)
