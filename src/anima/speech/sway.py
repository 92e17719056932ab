"""Speech-reactive head sway from the loudness of the audio being played.

Per 50 ms hop: the hop's loudness (dBFS), a voice-activity gate with hysteresis (on above
-35 dB, off below -45 dB), an envelope with attack and release, and one oscillator per axis
at the Reachy Mini app's frequencies and amplitudes. The cost of a hop depends only on the
hop's samples — O(1) in the utterance length (the app re-scanned a 10 s buffer every hop).
The body has no translation joints, so the app's x/y/z sway is left out.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from anima.speech.base import Samples

HOP_S = 0.05
F_PITCH, F_YAW, F_ROLL = 2.2, 0.6, 1.3  # Hz
A_PITCH, A_YAW, A_ROLL = math.radians(4.5), math.radians(7.5), math.radians(2.25)
DB_ON, DB_OFF = -35.0, -45.0  # voice-activity hysteresis
DB_FLOOR, DB_LOUD = -45.0, -15.0  # loudness mapped to 0…1 between these
ATTACK_S, RELEASE_S = 0.05, 0.25


@dataclass(frozen=True)
class Sway:
    roll: float
    pitch: float
    yaw: float


ZERO = Sway(0.0, 0.0, 0.0)


class SwayGenerator:
    """Feed one hop at a time; get the head sway (radians) for that hop."""

    def __init__(self, sample_rate: int, phase_seed: float = 0.0) -> None:
        self.hop = max(1, round(HOP_S * sample_rate))
        self._dt = self.hop / sample_rate
        self._t = 0.0
        self._env = 0.0
        self._active = False
        self._up = 1.0 - math.exp(-self._dt / ATTACK_S)
        self._down = 1.0 - math.exp(-self._dt / RELEASE_S)
        self._phase = (phase_seed, phase_seed * 1.7 + 1.0, phase_seed * 2.3 + 2.0)
        self._span = DB_LOUD - DB_FLOOR

    def feed(self, hop: Samples) -> Sway:
        x = hop.astype(np.float32)
        energy = float(np.dot(x, x)) / max(1, len(x))
        db = 10.0 * math.log10(energy / (32768.0 * 32768.0) + 1e-12)
        if self._active and db < DB_OFF:
            self._active = False
        elif not self._active and db > DB_ON:
            self._active = True
        loud = min(1.0, max(0.0, (db - DB_FLOOR) / self._span)) if self._active else 0.0
        rate = self._up if loud > self._env else self._down
        self._env += rate * (loud - self._env)
        self._t += self._dt
        e, t, (pp, py, pr) = self._env, self._t, self._phase
        two_pi = 2.0 * math.pi
        return Sway(
            roll=A_ROLL * e * math.sin(two_pi * F_ROLL * t + pr),
            pitch=A_PITCH * e * math.sin(two_pi * F_PITCH * t + pp),
            yaw=A_YAW * e * math.sin(two_pi * F_YAW * t + py),
        )
