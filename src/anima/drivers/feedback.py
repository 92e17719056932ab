"""What a driver measured, against what it sent: the positions a robot reports, the lag between
a commanded position and the robot reaching it, and how far it is from where it should be.

A driver that can read its robot back (the Reachy Mini's daemon reports the head's pose and
the antennas at 50 Hz) implements :class:`Measuring`. It keeps a :class:`SentHistory` of what it
sent, with the time it sent it, and offers each reading to it: the lag of a reading is the age
of the commanded frame it matches best (the newest of the closest), and its deviation is how
far it is from that frame. Both are undefined while the robot stands still (every frame of the
window matches) and are then ``None``; a reading far from every recent frame (a joint that
does not follow, the robot's own limits) has no lag but a deviation.
"""

from __future__ import annotations

import collections
import math
import threading
import time
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import numpy as np

from anima.body import FloatArray
from anima.wire.state import MeasuredState


@dataclass(frozen=True, slots=True)
class Feedback:
    """The newest reading: a value per channel of the body (its units), NaN where the driver
    measures nothing."""

    t: float  # time.monotonic() of the reading
    values: FloatArray
    lag_s: float | None  # commanded → measured, the median of recent moves; None before one
    deviation: float  # |measured − commanded| at its worst channel, the body's units
    worst: str  # that channel ("" when nothing is measured)


@runtime_checkable
class Measuring(Protocol):
    """A driver that reads its robot back."""

    def feedback(self) -> Feedback | None:
        """The newest reading, or None before the first."""
        ...


@dataclass(frozen=True, slots=True)
class Match:
    """One reading against the history."""

    lag_s: float | None
    deviation: float
    worst: int  # the channel's index (-1 with nothing measured)


class SentHistory:
    """What was sent in the last ``window_s`` seconds, and each reading matched against it.

    Thread-safe: the driver's sender adds, its reader matches, the state reads the summary.
    ``still`` is the spread (the body's units) below which the window is not moving enough to
    tell one frame from another; ``follow`` the distance beyond which a reading matches none;
    ``noise`` how much closer than another a frame must be to be the older match.
    """

    def __init__(
        self,
        names: tuple[str, ...],
        *,
        window_s: float = 1.0,
        still: float = 0.5,
        follow: float = 3.0,
        noise: float = 0.25,
        lags_kept: int = 25,
    ) -> None:
        self.names = names
        self.window_s = window_s
        self.still = still
        self.follow = follow
        self.noise = noise
        self._sent: collections.deque[tuple[float, FloatArray]] = collections.deque()
        self._lags: collections.deque[float] = collections.deque(maxlen=lags_kept)
        self._lock = threading.Lock()
        self.samples: list[Match] | None = None  # each match with a lag, once a bench sets []

    def add(self, t: float, values: FloatArray) -> None:
        with self._lock:
            self._sent.append((t, values.copy()))
            while self._sent and self._sent[0][0] < t - self.window_s:
                self._sent.popleft()

    def clear(self) -> None:
        with self._lock:
            self._sent.clear()
            self._lags.clear()

    def match(self, t: float, measured: FloatArray) -> Match:
        """Match a reading taken at ``t`` (NaN channels unmeasured); its lag joins the recent."""
        seen = ~np.isnan(measured)
        with self._lock:
            sent = [(ts, v) for ts, v in self._sent if ts <= t]
        if not sent or not seen.any():
            return Match(None, 0.0, -1)
        frames = np.array([v[seen] for _, v in sent])
        errors = np.abs(frames - measured[seen])
        distance = errors.max(axis=1)
        # the newest of the closest, within the reading's noise: on a slow stretch many frames
        # are about as close, and the oldest of them is not the lag
        best = int(np.flatnonzero(distance <= distance.min() + self.noise)[-1])
        columns = np.flatnonzero(seen)
        worst = int(columns[int(np.argmax(errors[best]))])
        spread = float((frames.max(axis=0) - frames.min(axis=0)).max())
        if spread < self.still or distance[best] > self.follow:
            return Match(None, float(distance[best]), worst)
        match = Match(t - sent[best][0], float(distance[best]), worst)
        with self._lock:
            self._lags.append(t - sent[best][0])
            if self.samples is not None:
                self.samples.append(match)
        return match

    def recent_lag(self) -> float | None:
        """The median lag of the recent readings that had one."""
        with self._lock:
            lags = sorted(self._lags)
        return lags[len(lags) // 2] if lags else None

    def feedback(self, t: float, measured: FloatArray, match: Match) -> Feedback:
        worst = self.names[match.worst] if match.worst >= 0 else ""
        return Feedback(t, measured, self.recent_lag(), match.deviation, worst)


def measured_state(driver: object) -> MeasuredState | None:
    """The state's ``measured`` part: the driver's newest reading, when it reads one."""
    if not isinstance(driver, Measuring):
        return None
    fb = driver.feedback()
    if fb is None:
        return None
    return MeasuredState(
        age_ms=max(0.0, (time.monotonic() - fb.t) * 1000.0),
        lag_ms=None if fb.lag_s is None else fb.lag_s * 1000.0,
        deviation=fb.deviation,
        worst=fb.worst,
        values=tuple(None if math.isnan(v) else float(v) for v in fb.values),
    )
