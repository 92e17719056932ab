"""Following a point with head and eyes: the gaze offset sources.

Perception publishes a point ~30 times a second, with noise. The follower turns it into steady
secondary offsets: a dead zone ignores jitter around the current target, a low-pass filter
smooths what remains, and the direction is split between head and eyes. The eyes' share is a
fast offset source (``gaze.eyes``) and the head's a slow one (``gaze.head``), so the eyes lead
and the head follows, as in people; the engine smooths both to the tick rate.
"""

from __future__ import annotations

import math
import threading
from dataclasses import dataclass

from anima.body.gaze import GazeKinematics, GazeSplit
from anima.clock import Clock
from anima.motion.engine import MotionEngine

EYES, HEAD = "gaze.eyes", "gaze.head"


@dataclass(frozen=True, kw_only=True)
class GazeUpdate:
    """What one look-at request did."""

    yaw: float  # the direction asked for (radians)
    pitch: float
    moved: bool  # False when the dead zone swallowed it
    split: GazeSplit  # what head and eyes were told (clamped when unreachable)


class GazeFollower:
    def __init__(
        self,
        engine: MotionEngine,
        kinematics: GazeKinematics,
        clock: Clock,
        *,
        dead_zone_rad: float = 0.02,
        smoothing_tau_s: float = 0.1,
        eyes_hz: float = 5.0,
        head_hz: float = 1.5,
    ) -> None:
        self._engine = engine
        self._kin = kinematics
        self._clock = clock
        self._dead_zone = dead_zone_rad
        self._tau = smoothing_tau_s
        self._eyes_hz = eyes_hz
        self._head_hz = head_hz
        self._lock = threading.Lock()
        self._target: tuple[float, float] | None = None  # filtered direction (yaw, pitch)
        self._last_t = 0.0

    @property
    def kinematics(self) -> GazeKinematics:
        return self._kin

    @property
    def active(self) -> bool:
        return self._target is not None

    def look_at(self, x: float, y: float, z: float) -> GazeUpdate:
        """Aim at a point in the head frame (metres). Unreachable points are clamped."""
        yaw, pitch = self._kin.direction(x, y, z)
        now = self._clock.now()
        with self._lock:
            if self._target is None:
                target = (yaw, pitch)
            elif math.hypot(yaw - self._target[0], pitch - self._target[1]) < self._dead_zone:
                split = self._kin.split(*self._target)
                return GazeUpdate(yaw=yaw, pitch=pitch, moved=False, split=split)
            else:
                a = 1.0 - math.exp(-max(now - self._last_t, 0.0) / self._tau)
                ty, tp = self._target
                target = (ty + a * (yaw - ty), tp + a * (pitch - tp))
            self._target = target
            self._last_t = now
            split = self._kin.split(*target)
            self._engine.set_offset(
                HEAD, head=(0.0, split.head_pitch, split.head_yaw), bandwidth_hz=self._head_hz
            )
            self._engine.set_offset(
                EYES,
                deltas=self._kin.eye_deltas(split.eyes_yaw, split.eyes_pitch),
                bandwidth_hz=self._eyes_hz,
            )
        return GazeUpdate(yaw=yaw, pitch=pitch, moved=True, split=split)

    def release(self) -> None:
        """Let head and eyes drift back to the primary pose (the offsets decay smoothly)."""
        with self._lock:
            self._target = None
            self._engine.clear_offset(HEAD)
            self._engine.clear_offset(EYES)
