"""A voice stream's motion from its own sound: the mouth opening from each 10 ms's loudness and
the head's sway from each 50 ms hop, as the samples are made (docs/speech.md, *Voice streams*).

A realtime model's voice comes without the word timings a TTS engine gives, so until the server
sends visemes (:meth:`anima.speech.stream.Stream.visemes`) the lips follow the loudness; the
sway always does, as it does for every utterance.
"""

from __future__ import annotations

import math

import numpy as np

from anima.speech.base import Samples
from anima.speech.sway import SwayGenerator
from anima.speech.utterance import Playback
from anima.speech.visemes import LipTrack

LIP_HOP_S = 0.01  # the audio-driven lips' hop: one mouth opening per 10 ms
LIP_FLOOR_DB, LIP_FULL_DB = -45.0, -18.0  # loudness (dBFS) of a closed and a fully open mouth


class SoundMotion:
    """Places the lips' openings and the sway's hops of a stream's samples as they are made
    (the stream's worker thread only)."""

    def __init__(self, playback: Playback, rate: int) -> None:
        self._playback = playback
        self.lips: LipTrack = playback.lips  # the lips from loudness, until visemes come
        self._hop = max(1, round(LIP_HOP_S * rate))
        self._sway = SwayGenerator(rate)
        self._pending = np.zeros(0, dtype=np.int16)  # made samples short of a sway hop

    def add(self, out: Samples, base: int) -> None:
        """``out``: the stream's next samples, ``base`` samples into it."""
        self._lips(out, base)
        self._pending = np.concatenate((self._pending, out))
        hop = self._sway.hop
        while len(self._pending) >= hop:
            self._playback.sway.append(self._sway.feed(self._pending[:hop]))
            self._pending = self._pending[hop:]

    def _lips(self, out: Samples, base: int) -> None:
        """The mouth's opening per hop of ``out``.

        Each hop's opening is placed at the hop's end: with the lip track's anticipation
        (half a 40 ms blend) the mouth shows the loudness of the audio ~5 ms ahead of what
        plays. In an underrun the player closes the mouth (the sink has nothing to play)."""
        hop = self._hop
        x = out.astype(np.float64)
        span = LIP_FULL_DB - LIP_FLOOR_DB
        for s in range(0, len(x), hop):
            seg = x[s : s + hop]
            power = float(np.dot(seg, seg)) / len(seg)
            db = 10.0 * math.log10(power / (32768.0 * 32768.0) + 1e-12)
            self.lips.add_opening(base + s + len(seg), (db - LIP_FLOOR_DB) / span)
