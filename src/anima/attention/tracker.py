"""People from faces: a stable id across frames and brief occlusions, a smoothed direction,
whether each faces the robot, and whether each is speaking.

Each frame's faces arrive already projected into the robot frame (:class:`Detection`, made with
the head pose at the frame's capture time), so a person standing still keeps one direction
however the head turns, and association is by direction:

1. each track's direction, predicted to the frame's time, is paired greedily with the nearest
   detection within ``gate_rad`` (nearest pairs first: a handful of faces needs no Hungarian
   solver, and scipy stays out of the runtime's dependencies);
2. a track seen in the previous frame that found no face, and a face that found no track, of a
   similar size, are the same person moving fast (a head turned quickly, a face that jumps):
   the id is kept and its filter restarts at the new direction;
3. a face left over is a new person; a track unseen for ``lost_s`` is dropped (a brief
   occlusion keeps the id and the last direction).

Directions are smoothed by a one-euro filter (Casiez et al., CHI 2012): a low cut-off at rest
hides the detector's jitter, a higher one while the face moves keeps the lag small, and, being
first-order, it never overshoots a step.

``facing``: the face is turned less than ``facing_deg`` from the camera (``Face.yaw_deg``); a
detector without landmarks finds frontal faces only, so an unknown yaw counts as facing; a
frame the mesh did not read (``vision.detect_every``: the detector's frames) keeps the track's
last yaw.
``speaking``: the mouth opened and closed over the last ``speaking_window_s`` (the spread of
``Face.mouth_open``), or a voice came from the person's direction (:meth:`Tracker.voice`); it
holds ``speaking_hold_s`` after the last evidence, across the pauses between words.
"""

from __future__ import annotations

import collections
import math
from collections.abc import Sequence
from dataclasses import dataclass, field

from anima.listening.direction.types import VoiceDirection
from anima.vision.types import Box


def wrap(angle: float) -> float:
    """``angle`` in (-π, π]."""
    return math.pi - (math.pi - angle) % (2.0 * math.pi)


def separation(az0: float, el0: float, az1: float, el1: float) -> float:
    """The angle between two directions (radians; small-angle form, exact enough for gating)."""
    return math.hypot(wrap(az1 - az0) * math.cos((el0 + el1) / 2.0), el1 - el0)


@dataclass(frozen=True, kw_only=True)
class Detection:
    """One face of one frame, projected into the robot frame."""

    t: float  # the frame's capture time (runtime clock)
    azimuth: float  # radians, positive: the robot's left
    elevation: float  # radians, positive: up
    distance: float  # metres (from the face's size)
    box: Box  # in the image
    score: float = 1.0
    yaw_deg: float | None = None  # how far the face is turned from the camera
    mouth_open: float | None = None  # lips' gap over the face's height


@dataclass(frozen=True, kw_only=True)
class Person:
    """One tracked person, as the policy and the state see them."""

    id: int
    azimuth: float  # smoothed, radians
    elevation: float
    distance: float  # metres
    facing: bool
    speaking: bool
    last_seen: float  # runtime clock
    first_seen: float
    visible: bool  # seen in the newest frame


class OneEuro:
    """The one-euro filter on one value: cut-off ``min_cutoff + beta·|speed|`` (Hz)."""

    def __init__(
        self,
        t: float,
        x: float,
        *,
        min_cutoff: float = 1.0,
        beta: float = 2.0,
        d_cutoff: float = 1.0,
    ) -> None:
        self.min_cutoff = min_cutoff
        self.beta = beta
        self.d_cutoff = d_cutoff
        self.value = x
        self.speed = 0.0  # the filtered derivative (units/s)
        self._t = t

    @staticmethod
    def _alpha(dt: float, cutoff: float) -> float:
        tau = 1.0 / (2.0 * math.pi * cutoff)
        return 1.0 / (1.0 + tau / dt)

    def reset(self, t: float, x: float) -> float:
        self.value, self.speed, self._t = x, 0.0, t
        return x

    def __call__(self, t: float, x: float) -> float:
        dt = t - self._t
        if dt <= 0.0:
            return self.value
        speed = (x - self.value) / dt
        a_d = self._alpha(dt, self.d_cutoff)
        self.speed = a_d * speed + (1.0 - a_d) * self.speed
        a = self._alpha(dt, self.min_cutoff + self.beta * abs(self.speed))
        self.value = a * x + (1.0 - a) * self.value
        self._t = t
        return self.value


@dataclass(eq=False)
class _Track:
    id: int
    az: OneEuro
    el: OneEuro
    distance: float
    box: Box
    first_seen: float
    last_seen: float
    yaw_deg: float | None = None
    mouths: collections.deque[tuple[float, float]] = field(
        default_factory=lambda: collections.deque(maxlen=64)
    )
    speaking_until: float = -math.inf

    def predicted(self, t: float) -> tuple[float, float]:
        dt = min(max(t - self.last_seen, 0.0), 0.3)  # a short, bounded extrapolation
        return self.az.value + self.az.speed * dt, self.el.value + self.el.speed * dt


class Tracker:
    """Tracks people from each frame's projected faces; not thread-safe (its owner locks)."""

    def __init__(
        self,
        *,
        lost_s: float = 1.0,
        gate_rad: float = math.radians(12.0),
        size_ratio: float = 1.5,
        facing_deg: float = 25.0,
        speaking_window_s: float = 0.5,
        mouth_spread: float = 0.04,
        speaking_hold_s: float = 0.6,
        voice_match_rad: float = math.radians(15.0),
    ) -> None:
        self.lost_s = lost_s
        self.gate_rad = gate_rad
        self.size_ratio = size_ratio
        self.facing_deg = facing_deg
        self.speaking_window_s = speaking_window_s
        self.mouth_spread = mouth_spread
        self.speaking_hold_s = speaking_hold_s
        self.voice_match_rad = voice_match_rad
        self._tracks: list[_Track] = []
        self._next_id = 1
        self._frame_t = -math.inf  # the newest frame's time
        self._previous_t = -math.inf  # the frame before it

    # ------------------------------------------------------------------ input
    def update(self, t: float, detections: Sequence[Detection]) -> list[Person]:
        """One frame's faces (all of them: a face missing here is unseen in this frame)."""
        if t < self._frame_t:
            return self.people(t)  # an older frame than one already used: too late to matter
        self._previous_t, self._frame_t = self._frame_t, t
        unmatched = list(range(len(detections)))
        free = list(self._tracks)
        pairs: list[tuple[float, int, _Track]] = []
        for track in free:
            paz, pel = track.predicted(t)
            for i in unmatched:
                d = detections[i]
                cost = separation(paz, pel, d.azimuth, d.elevation)
                if cost <= self.gate_rad:
                    pairs.append((cost, i, track))
        pairs.sort(key=lambda p: (p[0], p[2].id))
        for _, i, track in pairs:
            if i in unmatched and track in free:
                self._see(track, detections[i], jumped=False)
                unmatched.remove(i)
                free.remove(track)
        # a fast move: the track seen last frame and a face of its size, nearest first
        recent = [tr for tr in free if tr.last_seen >= self._previous_t]
        jumps: list[tuple[float, int, _Track]] = []
        for track in recent:
            paz, pel = track.predicted(t)
            for i in unmatched:
                d = detections[i]
                ratio = max(d.distance, track.distance) / max(min(d.distance, track.distance), 1e-6)
                if ratio <= self.size_ratio:
                    jumps.append((separation(paz, pel, d.azimuth, d.elevation), i, track))
        jumps.sort(key=lambda p: (p[0], p[2].id))
        for _, i, track in jumps:
            if i in unmatched and track in free:
                self._see(track, detections[i], jumped=True)
                unmatched.remove(i)
                free.remove(track)
        for i in unmatched:
            self._tracks.append(self._new(detections[i]))
        self.prune(t)
        return self.people(t)

    def voice(self, direction: VoiceDirection) -> int | None:
        """A voice heard from ``direction``: the id of the person it came from (marked speaking),
        or None (the robot's own voice, no speech, or nobody seen that way)."""
        if direction.own_voice or not direction.speech:
            return None
        best: tuple[float, _Track] | None = None
        for track in self._tracks:
            if direction.t - track.last_seen > self.lost_s:
                continue
            d = abs(wrap(direction.azimuth - track.az.value))  # arrays rarely tell elevation
            if d <= self.voice_match_rad and (best is None or d < best[0]):
                best = (d, track)
        if best is None:
            return None
        track = best[1]
        track.speaking_until = max(track.speaking_until, direction.t + self.speaking_hold_s)
        return track.id

    def prune(self, now: float) -> None:
        """Drop the people unseen for ``lost_s``."""
        self._tracks = [tr for tr in self._tracks if now - tr.last_seen <= self.lost_s]

    def clear(self) -> None:
        self._tracks = []

    # ------------------------------------------------------------------ output
    def people(self, now: float) -> list[Person]:
        out = []
        for tr in self._tracks:
            out.append(
                Person(
                    id=tr.id,
                    azimuth=tr.az.value,
                    elevation=tr.el.value,
                    distance=tr.distance,
                    facing=tr.yaw_deg is None or abs(tr.yaw_deg) < self.facing_deg,
                    speaking=now < tr.speaking_until,
                    last_seen=tr.last_seen,
                    first_seen=tr.first_seen,
                    visible=tr.last_seen >= self._frame_t,
                )
            )
        return out

    # ------------------------------------------------------------------ internals
    def _new(self, d: Detection) -> _Track:
        track = _Track(
            id=self._next_id,
            az=OneEuro(d.t, d.azimuth),
            el=OneEuro(d.t, d.elevation),
            distance=d.distance,
            box=d.box,
            first_seen=d.t,
            last_seen=d.t,
        )
        self._next_id += 1
        self._see(track, d, jumped=True)
        return track

    def _see(self, track: _Track, d: Detection, *, jumped: bool) -> None:
        if jumped:
            track.az.reset(d.t, d.azimuth)
            track.el.reset(d.t, d.elevation)
        else:
            # filter the azimuth unwrapped around the track's own value (no jump at ±π)
            track.az(d.t, track.az.value + wrap(d.azimuth - track.az.value))
            track.el(d.t, d.elevation)
        track.distance = d.distance
        track.box = d.box
        track.last_seen = d.t
        if d.yaw_deg is not None:  # a frame without the mesh's reading keeps the last
            track.yaw_deg = d.yaw_deg
        if d.mouth_open is not None:
            track.mouths.append((d.t, d.mouth_open))
            window = [m for ts, m in track.mouths if ts >= d.t - self.speaking_window_s]
            if len(window) >= 3 and max(window) - min(window) >= self.mouth_spread:
                track.speaking_until = max(track.speaking_until, d.t + self.speaking_hold_s)
