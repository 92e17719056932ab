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


@dataclass(frozen=True, slots=True)
class _Aim:
    """A source's new target as the engine takes it: made on the caller's thread, so the
    tick only swaps it in. ``cols`` ascending, their ``target`` values none zero."""

    cols: list[int]
    target: list[float]
    k1: float  # ω²·dt
    k2: float  # 1 − 2ω·dt


class _Source:
    """One source's smoothing state, on the columns it moves (a few of the bank's width)."""

    __slots__ = ("chan", "cols", "k1", "k2", "q", "rot", "settled", "target", "v", "vmax", "x")

    def __init__(self) -> None:
        self.cols: list[int] = []  # bank columns: 0-2 roll, pitch, yaw; 3 + i channel i
        self.target: list[float] = []
        self.x: list[float] = []
        self.v: list[float] = []
        self.vmax: list[float] = []
        self.k1 = 0.0  # ω²·dt
        self.k2 = 1.0  # 1 − 2ω·dt
        self.settled = True
        self.rot: list[int] = []  # the axes (0 roll, 1 pitch, 2 yaw) of x's first entries
        self.chan: list[tuple[int, int]] = []  # (channel, index in x) of the rest
        self.q: so3.Quat = so3.IDENTITY  # the rotation of x's head angles

    def retarget(self, aim: _Aim, vmax: Sequence[float]) -> None:
        """Aim at ``aim`` (columns not in it aim at 0), keeping the state of the columns
        already moving; columns resting at 0 with a target of 0 are let go."""
        self.k1, self.k2 = aim.k1, aim.k2
        self.settled = False
        if aim.cols == self.cols:  # the usual update: same columns, new values
            self.target = aim.target
            return
        row = dict(zip(aim.cols, aim.target, strict=True))
        old = dict(zip(self.cols, zip(self.x, self.v, strict=True), strict=True))
        cols = sorted(set(row) | {c for c, (x, v) in old.items() if x != 0.0 or v != 0.0})
        self.cols = cols
        self.target = [row.get(c, 0.0) for c in cols]
        self.x = [old.get(c, (0.0, 0.0))[0] for c in cols]
        self.v = [old.get(c, (0.0, 0.0))[1] for c in cols]
        self.vmax = [vmax[c] for c in cols]
        self.rot = [c for c in cols if c < _ROT]  # cols ascend: the angles come first
        if not self.rot:
            self.q = so3.IDENTITY
        self.chan = [(c - _ROT, j) for j, c in enumerate(cols) if c >= _ROT]

    def integrate(self, dt: float, check: bool) -> None:
        """One tick of the critically damped filter: a = ω²(target − x) − 2ω·v, semi-implicit
        Euler, the velocity slew-limited. Every ``check`` tick, a source within 1e-6 of its
        target and at rest snaps there and settles (no work until it is set again). ``q``
        becomes the rotation of the head angles reached."""
        x, v, target = self.x, self.v, self.target
        if check and all(
            abs(g - p) < 1e-6 and abs(w) < 1e-6 for g, p, w in zip(target, x, v, strict=True)
        ):
            self.x = x = list(target)
            self.v = [0.0] * len(v)
            self.settled = True
        else:
            k1, k2 = self.k1, self.k2
            for j, m in enumerate(self.vmax):
                w = v[j] * k2 + (target[j] - x[j]) * k1
                if w > m:
                    w = m
                elif w < -m:
                    w = -m
                v[j] = w
                x[j] += w * dt
        if not self.rot:
            return  # q is the identity (retarget says so when the angles go)
        angles = [0.0, 0.0, 0.0]
        for j, axis in enumerate(self.rot):
            angles[axis] = x[j]
        if angles[0] == 0.0 and angles[1] == 0.0 and angles[2] == 0.0:
            self.q = so3.IDENTITY
        else:
            self.q = so3.from_euler(angles[0], angles[1], angles[2])


class OffsetBank:
    """Holds every source's target and smoothed state; thread-safe input, engine-side output.

    Plain floats on each source's own columns, not arrays of the bank's width: a source moves a
    head rotation and a channel or two, and on this path a few float operations cost less than
    the fixed price of each numpy call (``anima bench loop``, docs/motion.md).
    """

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
        self._vmax = [max_rate_rad_s] * _ROT + body.max_speeds().tolist()
        self._sources: dict[str, _Source] = {}
        self._settled = True
        self._lock = threading.Lock()
        self._pending: dict[str, _Aim | str | None] = {}
        self._dirty = False
        head = [body.role_index(r) for r in HEAD_ROLES]
        self._head_cal: list[tuple[int, int, Calibration]] = []
        for axis, i in enumerate(head):
            if i is None:
                continue
            cal = body.channels[i].calibration
            assert cal is not None  # the body guarantees head channels are calibrated
            self._head_cal.append((axis, i, cal))
        self._deltas: list[tuple[int, float]] = []  # (channel, summed delta) of moving channels
        self._rotation: so3.Quat = so3.IDENTITY
        self._ticks = 0

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
        row = {axis: float(a) for axis, a in enumerate(offset.head)}
        for channel, delta in offset.deltas.items():
            row[_ROT + self._body.index(channel)] = float(delta)
        cols = sorted(c for c, value in row.items() if value != 0.0)
        w = 2.0 * math.pi * bw
        aim = _Aim(cols, [row[c] for c in cols], w * w * self._dt, 1.0 - 2.0 * w * self._dt)
        with self._lock:
            self._pending[name] = aim
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
        self._sources = {}
        self._deltas = []
        self._rotation = so3.IDENTITY
        self._settled = True

    @property
    def sources(self) -> tuple[str, ...]:
        return tuple(self._sources)

    # --- engine thread ----------------------------------------------------------------------
    def _drain(self) -> None:
        with self._lock:
            pending, self._pending, self._dirty = self._pending, {}, False
        sources = self._sources
        for name, entry in pending.items():
            if isinstance(entry, str):  # _DROP
                sources.pop(name, None)
                continue
            source = sources.get(name)
            if source is None:
                if entry is None:
                    continue
                source = sources[name] = _Source()
            # None: decay to zero, as fast as the source was following
            aim = _Aim([], [], source.k1, source.k2) if entry is None else entry
            source.retarget(aim, self._vmax)
        self._settled = False
        if not sources:  # step() will not run: forget what the last source added
            self._deltas = []
            self._rotation = so3.IDENTITY

    def add_to(self, frame: FloatArray) -> None:
        """Advance the smoothing by one tick and add the offsets to ``frame`` in place (the
        channel deltas summed over sources, the head rotations composed with the frame's)."""
        if self._dirty:
            self._drain()
        if not self._sources:
            return
        if not self._settled:
            self._step()
        for i, delta in self._deltas:
            frame[i] = frame.item(i) + delta
        q = self._rotation
        if q is so3.IDENTITY or not self._head_cal:
            return
        angles = [0.0, 0.0, 0.0]
        for axis, i, cal in self._head_cal:
            angles[axis] = (frame.item(i) - cal.zero) * cal.rad_per_unit
        composed = so3.to_euler(so3.multiply(q, so3.from_euler(angles[0], angles[1], angles[2])))
        for axis, i, cal in self._head_cal:
            frame[i] = cal.zero + composed[axis] / cal.rad_per_unit

    def _step(self) -> None:
        dt, check = self._dt, self._ticks % 8 == 0
        self._ticks += 1
        settled = True
        q = so3.IDENTITY
        deltas: dict[int, float] = {}
        for source in self._sources.values():
            if not source.settled:
                source.integrate(dt, check)
                settled = settled and source.settled
            x = source.x
            for i, j in source.chan:
                deltas[i] = deltas.get(i, 0.0) + x[j]
            r = source.q
            if r is not so3.IDENTITY:
                q = r if q is so3.IDENTITY else so3.multiply(q, r)
        self._deltas = list(deltas.items())
        self._rotation = q
        self._settled = settled
