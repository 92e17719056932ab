"""Idle layers: the life a body shows when no move holds it (breathing, blinking).

An idle layer writes *targets* for its channels given the held base frame. The engine mixes
each channel between base and target with a per-channel weight that is 0 while a move owns
the channel and ramps back to 1 (minimum-jerk) when the move lets go, so idle never fights a
commanded move and takes channels back without a step.
"""

from __future__ import annotations

import math
import random
import threading
from typing import Protocol

import numpy as np

from anima.body import Body, FloatArray, Role
from anima.config import MotionConfig
from anima.errors import ConfigError
from anima.motion.minjerk import min_jerk
from anima.motion.moves import IndexArray


class IdleLayer(Protocol):
    """What the engine needs of an idle layer."""

    name: str

    @property
    def channels(self) -> IndexArray:
        """The channels this layer animates."""
        ...

    @property
    def finished(self) -> bool:
        """True once the layer is done; the engine then drops it."""
        ...

    def stop(self) -> None:
        """End the layer (it may fade out first). Called from any thread."""
        ...

    def apply(self, t: float, base: FloatArray, target: FloatArray) -> None:
        """Write this layer's values for ``channels`` into ``target`` (already a copy of base)."""
        ...


class _EndlessLayer:
    """Layers that run until stopped."""

    finished = False  # an attribute, not a property: the mixer reads it every tick

    def stop(self) -> None:
        self.finished = True


def _role_channel(body: Body, role: Role) -> tuple[IndexArray, int]:
    """The channel set and index of ``role`` (empty and -1 when the body has no such channel)."""
    index = body.role_index(role)
    return np.array([] if index is None else [index], dtype=np.intp), -1 if index is None else index


class Breathing(_EndlessLayer):
    """A slow sinusoid on the neck pitch: the head rises and falls as if breathing."""

    def __init__(self, body: Body, *, period_s: float = 5.0, amplitude_rad: float = 0.015) -> None:
        if not (math.isfinite(period_s) and period_s > 0):
            raise ConfigError(f"breathing period_s must be > 0, got {period_s!r}")
        if not (math.isfinite(amplitude_rad) and amplitude_rad >= 0):
            raise ConfigError(f"breathing amplitude_rad must be ≥ 0, got {amplitude_rad!r}")
        self.name = "breathing"
        self._channels, self._index = _role_channel(body, Role.NECK_PITCH)
        index = self._index if self._index >= 0 else None
        cal = None if index is None else body.channels[index].calibration
        self._amplitude = 0.0 if cal is None else amplitude_rad / abs(cal.rad_per_unit)
        self._omega = 2.0 * math.pi / period_s

    @property
    def channels(self) -> IndexArray:
        return self._channels

    def apply(self, t: float, base: FloatArray, target: FloatArray) -> None:
        if self._index >= 0:
            i = self._index
            target[i] = base.item(i) + self._amplitude * math.sin(self._omega * t)


class Blink(_EndlessLayer):
    """Blinks at random intervals: the lids close quickly, hold briefly and reopen slower."""

    def __init__(
        self,
        body: Body,
        *,
        interval_s: tuple[float, float] = (2.5, 6.0),
        close_s: float = 0.07,
        hold_s: float = 0.03,
        open_s: float = 0.12,
        seed: int | None = None,
    ) -> None:
        lo, hi = interval_s
        if not (0 < lo <= hi and math.isfinite(hi)):
            raise ConfigError(f"blink interval_s must be 0 < min ≤ max, got {interval_s!r}")
        for label, v in (("close_s", close_s), ("hold_s", hold_s), ("open_s", open_s)):
            if not (math.isfinite(v) and v >= 0):
                raise ConfigError(f"blink {label} must be ≥ 0, got {v!r}")
        self.name = "blink"
        self._channels, self._index = _role_channel(body, Role.EYELIDS)
        if self._index >= 0:
            ch = body.channels[self._index]
            self._closed = ch.closed if ch.closed is not None else ch.min
        else:
            self._closed = 0.0
        self._interval = (lo, hi)
        self._close, self._hold, self._open = close_s, hold_s, open_s
        self._rng = random.Random(seed)
        self._next: float | None = None
        self._started: float | None = None
        self._requested = threading.Event()

    @property
    def channels(self) -> IndexArray:
        return self._channels

    def trigger(self) -> None:
        """Blink at the next tick (thread-safe)."""
        self._requested.set()

    def closure(self, t: float) -> float:
        """How closed the lids are at time ``t`` (0 open, 1 closed); advances the schedule."""
        if self._next is None:
            self._next = t + self._rng.uniform(*self._interval)
        if self._started is None:
            if t >= self._next or self._requested.is_set():
                self._requested.clear()
                self._started = t
            else:
                return 0.0
        dt = t - self._started
        if dt < self._close:
            return min_jerk(dt / self._close)
        dt -= self._close
        if dt < self._hold:
            return 1.0
        dt -= self._hold
        if dt < self._open:
            return 1.0 - min_jerk(dt / self._open)
        self._started = None
        self._next = t + self._rng.uniform(*self._interval)
        return 0.0

    def apply(self, t: float, base: FloatArray, target: FloatArray) -> None:
        if self._index < 0:
            return
        c = self.closure(t)
        if c > 0.0:
            b = base.item(self._index)
            target[self._index] = b + c * (self._closed - b)


def default_idle_layers(body: Body, config: MotionConfig) -> list[IdleLayer]:
    layers: list[IdleLayer] = []
    if config.breathing.enabled:
        b = config.breathing
        layers.append(Breathing(body, period_s=b.period_s, amplitude_rad=b.amplitude_rad))
    if config.blink.enabled:
        k = config.blink
        layers.append(
            Blink(
                body, interval_s=k.interval_s, close_s=k.close_s, hold_s=k.hold_s, open_s=k.open_s
            )
        )
    return layers
