"""The listening side's audio format, resampling and framing, below both speech and listening.

Everything in :mod:`anima.listening` works on **16 kHz mono int16** (what pocketsphinx's en-US model
and Silero VAD expect), in frames of :data:`FRAME_SAMPLES` = 512 samples (32 ms, the one window
size Silero VAD accepts at 16 kHz). Sources convert on the way in: anima's TTS speaks at
22.05 kHz, microphones often run at 44.1 or 48 kHz. The speech side uses it too: what the robot
plays reaches the echo canceller resampled to this format (:mod:`anima.speech.reference`).

Resampling is windowed-sinc interpolation in numpy (a Hann-windowed low-pass at 0.95 × the lower
Nyquist, 16 taps either side): clean enough for recognition, ~2 ms per second of audio, no SciPy.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

SAMPLE_RATE = 16000  # Hz, the rate of every frame past a source
FRAME_SAMPLES = 512  # samples per frame: 32 ms, Silero VAD's window at 16 kHz
FRAME_S = FRAME_SAMPLES / SAMPLE_RATE

MIN_INPUT_RATE = 8_000  # Hz: below this a file is not speech (a header that says 1 Hz lies)
MAX_INPUT_RATE = 192_000  # Hz: the highest rate sound cards record at

Frame = NDArray[np.int16]  # mono PCM at SAMPLE_RATE
_HALF = 16  # interpolation taps on each side of a resampled point


def _interpolate(x: NDArray[np.float64], t: NDArray[np.float64], cutoff: float) -> Frame:
    """``x`` evaluated at fractional sample positions ``t`` (samples outside ``x`` count as 0)."""
    k = np.arange(-_HALF + 1, _HALF + 1)
    idx = np.floor(t).astype(np.int64)[:, None] + k[None, :]
    d = t[:, None] - idx
    weights = cutoff * np.sinc(cutoff * d) * (0.5 + 0.5 * np.cos(np.pi * d / _HALF))
    inside = (idx >= 0) & (idx < len(x))
    taps = np.where(inside, x[np.clip(idx, 0, max(len(x) - 1, 0))], 0.0)
    y: NDArray[np.float64] = (taps * weights).sum(axis=1)
    return np.clip(np.round(y), -32768, 32767).astype(np.int16)


def resample(samples: NDArray[np.int16], from_rate: int, to_rate: int = SAMPLE_RATE) -> Frame:
    """Mono int16 ``samples`` at ``from_rate`` Hz, resampled to ``to_rate`` Hz (whole signal)."""
    if from_rate <= 0 or to_rate <= 0:
        raise ValueError(f"sample rates must be > 0, got {from_rate} → {to_rate}")
    if from_rate == to_rate or len(samples) == 0:
        return np.asarray(samples, dtype=np.int16).copy()
    n_out = len(samples) * to_rate // from_rate
    t = np.arange(n_out, dtype=np.float64) * (from_rate / to_rate)
    cutoff = 0.95 * min(1.0, to_rate / from_rate)
    return _interpolate(samples.astype(np.float64), t, cutoff)


class StreamResampler:
    """:func:`resample` for a stream that arrives in blocks (a microphone at its own rate).

    Keeps the last samples of each block so points near block edges see both sides; the output
    lags the input by ``_HALF`` input samples (< 0.4 ms at 44.1 kHz).
    """

    def __init__(self, from_rate: int, to_rate: int = SAMPLE_RATE) -> None:
        if from_rate <= 0 or to_rate <= 0:
            raise ValueError(f"sample rates must be > 0, got {from_rate} → {to_rate}")
        self.from_rate = from_rate
        self.to_rate = to_rate
        self._step = from_rate / to_rate  # input samples per output sample
        self._cutoff = 0.95 * min(1.0, to_rate / from_rate)
        self._history = np.zeros(0, dtype=np.float64)  # input samples still needed
        self._origin = 0  # input index of _history[0]
        self._produced = 0  # output samples so far
        self._consumed = 0  # input samples so far

    def feed(self, block: NDArray[np.int16]) -> Frame:
        """The output samples that ``block`` completes (possibly none)."""
        if self.from_rate == self.to_rate:
            return np.asarray(block, dtype=np.int16).copy()
        self._consumed += len(block)
        self._history = np.concatenate([self._history, block.astype(np.float64)])
        available = self._origin + len(self._history) - _HALF  # last input with full right side
        n_out = max(0, int(np.floor((available - 1) / self._step)) + 1 - self._produced)
        t = (self._produced + np.arange(n_out, dtype=np.float64)) * self._step - self._origin
        out = _interpolate(self._history, t, self._cutoff)
        self._produced += n_out
        keep_from = max(0, int(np.floor(self._produced * self._step)) - _HALF - self._origin)
        self._history = self._history[keep_from:]
        self._origin += keep_from
        return out

    def flush(self) -> Frame:
        """The stream ended: the output its last ``_HALF`` input samples still owed (the input
        past the end counts as silence), so the whole stream gives as many samples as
        :func:`resample` of it would."""
        if self.from_rate == self.to_rate:
            return np.zeros(0, dtype=np.int16)
        owed = self._consumed * self.to_rate // self.from_rate - self._produced
        consumed = self._consumed
        out = self.feed(np.zeros(_HALF + 1, dtype=np.int16))
        self._consumed = consumed
        return out[: max(0, owed)]


class Framer:
    """Cuts a stream of any block sizes into frames of exactly :data:`FRAME_SAMPLES`."""

    def __init__(self, frame_samples: int = FRAME_SAMPLES) -> None:
        self.frame_samples = frame_samples
        self._pending = np.zeros(0, dtype=np.int16)

    def feed(self, block: NDArray[np.int16]) -> list[Frame]:
        """Whole frames completed by ``block``; the remainder waits for the next block."""
        data = np.concatenate([self._pending, np.asarray(block, dtype=np.int16).ravel()])
        n = len(data) // self.frame_samples
        frames = [data[i * self.frame_samples : (i + 1) * self.frame_samples] for i in range(n)]
        self._pending = data[n * self.frame_samples :]
        return frames

    def flush(self) -> list[Frame]:
        """The remainder zero-padded to one last frame (none when nothing is pending)."""
        if len(self._pending) == 0:
            return []
        frame = np.zeros(self.frame_samples, dtype=np.int16)
        frame[: len(self._pending)] = self._pending
        self._pending = np.zeros(0, dtype=np.int16)
        return [frame]

    @property
    def pending(self) -> int:
        """Samples waiting for the rest of their frame."""
        return len(self._pending)

    def clear(self) -> None:
        self._pending = np.zeros(0, dtype=np.int16)
