"""Prosody at the end of speech: does the voice *fall* the way it does when a sentence is over?

People (and TTS voices) end a statement or a request with a pitch fall to the bottom of their
range and a fading voice; a pause in the middle of a sentence ("walk forward … for two seconds")
keeps the pitch up. :class:`ProsodyTracker` follows each 32 ms frame's pitch and level and,
when speech stops, says how the last voiced frames sit against the utterance's own register.

Pitch is YIN's cumulative mean normalized difference on one frame (lags 2.5–14 ms: 70–400 Hz),
computed with one FFT (~50 µs a frame here). A frame is voiced when its best dip is below
:data:`VOICED_DIP` and its level is within :data:`VOICED_RANGE_DB` of the utterance's loudest.
Everything is relative to the speaker (semitones from the utterance's median pitch, dB from its
loudest frame), so a high or a low voice, near or far, reads the same.
"""

from __future__ import annotations

import collections
import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from anima.audio import FRAME_S, SAMPLE_RATE, Frame

MIN_F0 = 70.0  # Hz: the lowest pitch looked for (a low male voice)
MAX_F0 = 400.0  # Hz: the highest (a child)
VOICED_DIP = 0.3  # YIN's dip below this: a periodic (voiced) frame
VOICED_RANGE_DB = 30.0  # a voiced frame is at most this far below the utterance's loudest
TAIL_S = 0.35  # the end of speech looked at: the last word's final syllable or two
HISTORY_S = 15.0  # frames remembered (the longest utterance worth a register)
OCTAVE_ERROR_ST = 8.0  # farther than this from the median pitch: an octave error of the tracker
MIN_VOICED = 2  # voiced frames the tail needs before a fall is judged at all
_MIN_LAG = int(SAMPLE_RATE / MAX_F0)
_MAX_LAG = int(SAMPLE_RATE / MIN_F0) + 1


def pitch(frame: Frame) -> tuple[float | None, float]:
    """``(f0 in Hz or None when unvoiced, YIN's dip)`` of one frame (≥ 2 × the longest lag)."""
    x = frame.astype(np.float64)
    x -= x.mean()
    n = len(x)
    window = n - _MAX_LAG
    if window < _MAX_LAG:
        raise ValueError(f"pitch: a frame needs ≥ {2 * _MAX_LAG} samples, got {n}")
    size = 1 << (n + window - 1).bit_length()
    # r[τ] = Σ_{j<W} x[j]·x[j+τ], from one cross-correlation of the head with the whole frame
    spectrum = np.fft.rfft(x, size)
    head = np.fft.rfft(x[:window], size)
    r = np.fft.irfft(spectrum * np.conj(head), size)[: _MAX_LAG + 1]
    energy = np.concatenate([[0.0], np.cumsum(x * x)])
    tail_energy = energy[window : window + _MAX_LAG + 1] - energy[: _MAX_LAG + 1]
    d = energy[window] + tail_energy - 2.0 * r  # Σ (x[j] − x[j+τ])², τ = 0 … max lag
    d[0] = 0.0
    taus = np.arange(1, _MAX_LAG + 1)
    cumulative = np.cumsum(d[1:])
    cmnd = np.ones(_MAX_LAG + 1)
    cmnd[1:] = np.where(cumulative > 0, d[1:] * taus / np.maximum(cumulative, 1e-12), 1.0)
    search = cmnd[_MIN_LAG:]
    below = np.flatnonzero(search < VOICED_DIP)
    if len(below) == 0:
        return None, float(search.min())
    tau = int(below[0])
    while tau + 1 < len(search) and search[tau + 1] < search[tau]:
        tau += 1  # down to the bottom of the first dip under the threshold
    dip = float(search[tau])
    lag = float(tau + _MIN_LAG)
    if 0 < tau < len(search) - 1:  # parabolic interpolation between lags
        a, b, c = search[tau - 1], search[tau], search[tau + 1]
        denominator = a - 2 * b + c
        if denominator > 0:
            lag += 0.5 * (a - c) / denominator
    return SAMPLE_RATE / lag, dip


def level_db(frame: Frame) -> float:
    """The frame's RMS level in dBFS (−100 for digital silence)."""
    if len(frame) == 0:
        return -100.0
    rms = math.sqrt(float(np.mean(np.square(frame, dtype=np.float64))))
    return 20 * math.log10(max(rms, 1e-5) / 32768.0)


@dataclass(frozen=True, kw_only=True)
class Ending:
    """How the speech before the current silence ended, relative to the utterance."""

    voiced: int  # voiced frames in the tail (too few: nothing can be said)
    end_st: float  # the median of the tail's last three voiced pitches, semitones
    top_st: float  # the utterance's 80th percentile pitch, semitones from its median
    level_drop_db: float  # loudest − last voiced frame of the tail (the voice fading)

    def describe(self) -> str:
        return (
            f"pitch {self.end_st:+.1f} st ({self.end_st - self.top_st:+.1f} from the top), "
            f"level −{self.level_drop_db:.0f} dB over {self.voiced} voiced frames"
        )


def _smoothed(semitones: NDArray[np.float64]) -> NDArray[np.float64]:
    """Octave errors folded back (a jump of ~12 semitones off the register is the tracker's
    mistake, not the voice), then a 3-frame median against single-frame errors."""
    st = np.where(
        np.abs(semitones) > OCTAVE_ERROR_ST, semitones - 12 * np.sign(semitones), semitones
    )
    if len(st) < 3:
        return st
    padded = np.concatenate([st[:1], st, st[-1:]])
    out: NDArray[np.float64] = np.median(np.stack([padded[:-2], padded[1:-1], padded[2:]]), axis=0)
    return out


class ProsodyTracker:
    """Pitch and level of each frame of one utterance (see the module docstring)."""

    def __init__(self) -> None:
        size = max(1, round(HISTORY_S / FRAME_S))
        self._semitones: collections.deque[float] = collections.deque(maxlen=size)  # NaN: unvoiced
        self._levels: collections.deque[float] = collections.deque(maxlen=size)
        self._loudest = -100.0
        self._since_voiced = 0  # frames fed since the last voiced one
        self._tail_frames = max(1, round(TAIL_S / FRAME_S))

    def reset(self) -> None:
        self._semitones.clear()
        self._levels.clear()
        self._loudest = -100.0
        self._since_voiced = 0

    @property
    def since_voiced_s(self) -> float:
        """Audio since the last voiced frame: the voice's own silence, which Silero's speech
        probability reports ~0.1 s later (it holds over the last consonant and the room)."""
        return self._since_voiced * FRAME_S

    def feed(self, frame: Frame) -> None:
        """One frame of the utterance (frames of a pause are unvoiced: they do not count)."""
        level = level_db(frame)
        self._loudest = max(self._loudest, level)
        f0, _ = pitch(frame) if level > self._loudest - VOICED_RANGE_DB else (None, 1.0)
        self._semitones.append(12 * math.log2(f0 / 100.0) if f0 is not None else math.nan)
        self._levels.append(level)
        self._since_voiced = 0 if f0 is not None else self._since_voiced + 1

    def skip(self) -> None:
        """A frame of a pause that is not looked at (it still counts as the voice's silence)."""
        self._since_voiced += 1

    def ending(self) -> Ending | None:
        """The tail of the speech fed so far, or None when it has too few voiced frames."""
        semitones = np.asarray(self._semitones, dtype=np.float64)
        levels = np.asarray(self._levels, dtype=np.float64)
        voiced = ~np.isnan(semitones) & (levels > self._loudest - VOICED_RANGE_DB)
        if voiced.sum() < MIN_VOICED:
            return None
        median = float(np.median(semitones[voiced]))
        # the tail ends at the last voiced frame: the pause after it (fed too) is not speech
        last = int(np.flatnonzero(voiced)[-1])
        where = np.flatnonzero(voiced[max(0, last + 1 - self._tail_frames) : last + 1])
        if len(where) < MIN_VOICED:
            return None
        where += max(0, last + 1 - self._tail_frames)
        st = _smoothed(semitones[where] - median)
        top = float(np.percentile(_smoothed(semitones[voiced] - median), 80))
        return Ending(
            voiced=len(where),
            end_st=float(np.median(st[-3:])),
            top_st=top,
            level_drop_db=float(self._loudest - levels[last]),
        )
