"""Secondary offsets: additive, named, latest-value-wins inputs (gaze, speech sway, perception).

Sources update at their own rate (20–30 Hz is typical) from their own threads. Each update
replaces that source's *target*; the engine moves each source's applied value toward its
target with a critically damped second-order filter whose velocity is slew-limited, so a
30 Hz staircase becomes a smooth 100 Hz trajectory with no steps.

An offset has a head rotation (roll, pitch, yaw in radians), composed with the primary head
orientation as a rotation, and per-channel deltas in channel units (eyes, brows, …).
"""

from __future__ import annotations

import math
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from anima.body import HEAD_ROLES, Body, Calibration, FloatArray
from anima.errors import InvalidCommandError
from anima.motion import so3
from anima.motion.moves import check_finite

_ROT = 3  # the first three columns of a source row are roll, pitch, yaw (radians)
_DROP = "drop"  # pending marker: remove the source now


@dataclass(frozen=True, kw_only=True)
class Offset:
    """One source's desired offset: a head rotation and per-channel deltas."""

    head: tuple[float, float, float] = (0.0, 0.0, 0.0)  # roll, pitch, yaw in radians
    deltas: Mapping[str | int, float] = field(default_factory=dict)  # channel → units


class OffsetBank:
    """Holds every source's target and smoothed state; thread-safe input, engine-side output."""

    def __init__(
        self,
        body: Body,
        period: float,
        *,
        bandwidth_hz: float = 4.0,
        max_rate_rad_s: float = 2.5,
    ) -> None:
        self._body = body
        self._dt = period
        # the explicit integrator is well damped only while ω·dt stays small
        self.max_bandwidth_hz = 0.06 / period
        self._default_bw = self._check_bandwidth(bandwidth_hz)
        self._k1 = np.zeros((0, 1))  # per source: ω²·dt
        self._k2 = np.zeros((0, 1))  # per source: 1 − 2ω·dt
        n = len(body)
        self._width = _ROT + n
        self._vmax = np.concatenate(([max_rate_rad_s] * _ROT, body.max_speeds()))
        self._vmin = -self._vmax
        self._names: list[str] = []
        self._target = np.zeros((0, self._width))
        self._x = np.zeros((0, self._width))
        self._v = np.zeros((0, self._width))
        self._settled = True
        self._lock = threading.Lock()
        self._pending: dict[str, tuple[FloatArray, float] | str | None] = {}
        self._dirty = False
        head = [body.role_index(r) for r in HEAD_ROLES]
        self._head = [i for i in head if i is not None]
        self._head_axes = [a for a, i in enumerate(head) if i is not None]
        self._head_cal: list[tuple[int, int, Calibration]] = []
        for axis, i in zip(self._head_axes, self._head, strict=True):
            cal = body.channels[i].calibration
            assert cal is not None  # the body guarantees head channels are calibrated
            self._head_cal.append((axis, i, cal))
        self._sum = np.zeros(self._width)
        self._rotation: so3.Quat = so3.IDENTITY
        self._ticks = 0
        self._tmp = np.zeros((0, self._width))

    # --- any thread -----------------------------------------------------------------------
    def _check_bandwidth(self, bandwidth_hz: float) -> float:
        if not (math.isfinite(bandwidth_hz) and 0 < bandwidth_hz <= self.max_bandwidth_hz):
            raise InvalidCommandError(
                f"offset bandwidth_hz must be in (0, {self.max_bandwidth_hz:g}], "
                f"got {bandwidth_hz!r}"
            )
        return bandwidth_hz

    def set(self, name: str, offset: Offset, bandwidth_hz: float | None = None) -> None:
        """Replace source ``name``'s target (validated here, applied at the next tick).

        ``bandwidth_hz`` sets how fast this source is followed (default: the bank's).
        """
        bw = self._default_bw if bandwidth_hz is None else self._check_bandwidth(bandwidth_hz)
        check_finite(offset.head, f"offset {name!r} head")
        check_finite(offset.deltas.values(), f"offset {name!r} deltas")
        row = np.zeros(self._width)
        row[:_ROT] = offset.head
        for channel, delta in offset.deltas.items():
            row[_ROT + self._body.index(channel)] = delta
        with self._lock:
            self._pending[name] = (row, bw)
            self._dirty = True

    def set_values(
        self,
        name: str,
        head: Sequence[float],
        deltas: Mapping[str | int, float] | None,
        bandwidth_hz: float | None = None,
    ) -> None:
        """:meth:`set` from a caller's values: ``head`` must be (roll, pitch, yaw)."""
        if len(head) != 3:
            raise InvalidCommandError(
                f"offset {name!r}: head needs (roll, pitch, yaw), got {head!r}"
            )
        roll, pitch, yaw = (float(a) for a in head)
        self.set(name, Offset(head=(roll, pitch, yaw), deltas=dict(deltas or {})), bandwidth_hz)

    def clear(self, name: str) -> None:
        """Let source ``name`` decay smoothly to zero."""
        with self._lock:
            self._pending[name] = None
            self._dirty = True

    def drop(self, name: str) -> None:
        """Remove source ``name`` at the next tick, without decay (only the step limit applies)."""
        with self._lock:
            self._pending[name] = _DROP
            self._dirty = True

    def reset(self) -> None:
        """Forget every source at once (estop): no smoothing, nothing pending."""
        with self._lock:
            self._pending.clear()
            self._dirty = False
        self._names = []
        self._target = np.zeros((0, self._width))
        self._x = self._target.copy()
        self._v = self._target.copy()
        self._tmp = self._target.copy()
        self._k1 = np.zeros((0, 1))
        self._k2 = np.zeros((0, 1))
        self._sum[:] = 0.0
        self._rotation = so3.IDENTITY
        self._settled = True

    @property
    def sources(self) -> tuple[str, ...]:
        return tuple(self._names)

    # --- engine thread ----------------------------------------------------------------------
    def _drain(self) -> None:
        with self._lock:
            pending, self._pending, self._dirty = self._pending, {}, False
        for name, entry in pending.items():
            if isinstance(entry, str):  # _DROP
                if name in self._names:
                    self._remove(self._names.index(name))
                continue
            if name not in self._names:
                if entry is None:
                    continue
                self._names.append(name)
                grow = np.zeros((1, self._width))
                self._target = np.vstack((self._target, grow))
                self._x = np.vstack((self._x, grow))
                self._v = np.vstack((self._v, grow))
                self._tmp = np.zeros_like(self._x)
                self._k1 = np.vstack((self._k1, [[0.0]]))
                self._k2 = np.vstack((self._k2, [[0.0]]))
            i = self._names.index(name)
            if entry is None:
                self._target[i] = 0.0
                continue
            row, bw = entry
            self._target[i] = row
            w = 2.0 * math.pi * bw
            self._k1[i, 0] = w * w * self._dt
            self._k2[i, 0] = 1.0 - 2.0 * w * self._dt
        self._settled = False

    def _remove(self, i: int) -> None:
        del self._names[i]
        self._target = np.delete(self._target, i, axis=0)
        self._x = np.delete(self._x, i, axis=0)
        self._v = np.delete(self._v, i, axis=0)
        self._tmp = np.zeros_like(self._x)
        self._k1 = np.delete(self._k1, i, axis=0)
        self._k2 = np.delete(self._k2, i, axis=0)
        self._settled = False
        if not self._names:  # step() will not run: forget what the last source added
            self._sum[:] = 0.0
            self._rotation = so3.IDENTITY

    def step(self) -> bool:
        """Advance the smoothing by one tick; False when there is nothing to apply."""
        if self._dirty:
            self._drain()
        if not self._names:
            return False
        if self._settled:
            return True
        dt, x, v, tmp = self._dt, self._x, self._v, self._tmp
        # critically damped: a = ω²(target − x) − 2ω·v, semi-implicit Euler, slew-limited v
        np.subtract(self._target, x, out=tmp)
        if self._ticks % 8 == 0 and np.abs(tmp).max() < 1e-6 and np.abs(v).max() < 1e-6:
            x[:] = self._target
            v[:] = 0.0
            self._settled = True
        else:
            tmp *= self._k1
            v *= self._k2
            v += tmp
            np.minimum(v, self._vmax, out=v)
            np.maximum(v, self._vmin, out=v)
            np.multiply(v, dt, out=tmp)
            x += tmp
        self._ticks += 1
        # what apply() adds: the channel deltas summed over sources, the rotations composed
        np.add.reduce(x, axis=0, out=self._sum)
        q = so3.IDENTITY
        for roll, pitch, yaw in x[:, :_ROT].tolist():
            if roll != 0.0 or pitch != 0.0 or yaw != 0.0:
                r = so3.from_euler(roll, pitch, yaw)
                q = r if q is so3.IDENTITY else so3.multiply(q, r)
        self._rotation = q
        return True

    def apply(self, frame: FloatArray) -> None:
        """Add the smoothed offsets to ``frame`` in place (head as a rotation)."""
        frame += self._sum[_ROT:]
        q = self._rotation
        if q is so3.IDENTITY or not self._head:
            return
        angles = [0.0, 0.0, 0.0]
        for axis, i, cal in self._head_cal:
            angles[axis] = (frame[i] - cal.zero) * cal.rad_per_unit
        composed = so3.to_euler(so3.multiply(q, so3.from_euler(*angles)))
        for axis, i, cal in self._head_cal:
            frame[i] = cal.zero + composed[axis] / cal.rad_per_unit
