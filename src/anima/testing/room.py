"""A simulated room for full duplex: the robot's own voice coming back into its microphone.

:class:`EchoPath` is the acoustic path from the robot's loudspeaker to its microphone: a delay,
a gain and a reverberant tail (exponentially decaying noise with the room's RT60), as an
impulse response at 16 kHz. :meth:`EchoPath.apply` runs a whole signal through it (offline:
benchmarks, unit tests); :class:`StreamingEcho` does the same frame by frame (a live source fed
what the sink really played, :class:`RoomSource`).

:class:`RoomSource` is an :class:`~anima.listening.sources.AudioSource` that plays that room in
real time: each 32 ms frame is the echo of what the robot's sink played since the last frame
(read from a :class:`~anima.speech.reference.PlaybackReference`), plus whatever the person says
(:meth:`RoomSource.say`, mixed from the next frame on), plus the room's noise.
"""

from __future__ import annotations

import collections
import threading
import time
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from anima.audio import FRAME_S, FRAME_SAMPLES, SAMPLE_RATE, Frame
from anima.listening.sources import FrameSink
from anima.speech.reference import ReferenceReader

Signal = NDArray[np.float64]


@dataclass(frozen=True)
class EchoPath:
    """Loudspeaker → microphone: ``delay_s`` to the direct sound, its level ``gain_db`` against
    what was played, and a reverberant tail decaying 60 dB in ``rt60_s`` (``tail_db``: the tail's
    energy against the direct sound's). ``seed`` draws the tail."""

    delay_s: float = 0.03
    gain_db: float = -6.0
    rt60_s: float = 0.3
    tail_db: float = -6.0
    seed: int = 0

    def impulse_response(self) -> Signal:
        if not (0 <= self.delay_s <= 0.5 and 0 < self.rt60_s <= 2.0):
            raise ValueError(f"echo path out of range: {self!r}")
        delay = round(self.delay_s * SAMPLE_RATE)
        n_tail = round(self.rt60_s * SAMPLE_RATE)
        rng = np.random.default_rng(self.seed)
        t = np.arange(n_tail) / SAMPLE_RATE
        tail = rng.standard_normal(n_tail) * 10 ** (-3 * t / self.rt60_s)  # −60 dB at rt60
        tail *= 10 ** (self.tail_db / 20) / (float(np.sqrt(np.sum(tail**2))) or 1.0)
        ir = np.zeros(delay + 1 + n_tail)
        ir[delay] = 1.0
        ir[delay + 1 :] = tail
        return ir * 10 ** (self.gain_db / 20)

    def apply(self, played: NDArray[np.int16]) -> Signal:
        """The echo of a whole signal, as long as it (FFT convolution)."""
        ir = self.impulse_response()
        n = len(played) + len(ir) - 1
        size = 1 << (n - 1).bit_length()
        out = np.fft.irfft(np.fft.rfft(played.astype(np.float64), size) * np.fft.rfft(ir, size))
        return out[: len(played)]


class StreamingEcho:
    """:class:`EchoPath` frame by frame (overlap-add): ``push(played)`` → the echo heard now."""

    def __init__(self, path: EchoPath) -> None:
        self._ir = path.impulse_response()
        self._tail = np.zeros(len(self._ir) - 1)

    def push(self, played: Signal) -> Signal:
        n = len(played)
        full = np.convolve(played, self._ir)  # n + len(ir) - 1
        full[: len(self._tail)] += self._tail
        out, rest = full[:n], full[n:]
        self._tail = rest if len(rest) >= len(self._ir) - 1 else np.zeros(len(self._ir) - 1)
        return out


def to_int16(signal: Signal) -> Frame:
    return np.clip(np.round(signal), -32768, 32767).astype(np.int16)


class RoomSource:
    """The room as a live microphone, paced in real time (see the module docstring).

    ``reader`` reads what the robot's sink played; ``path`` is the echo (None: the robot is not
    heard, a headset); ``noise`` a function giving the next ``n`` samples of the room's noise.
    """

    name = "room"

    def __init__(
        self,
        reader: ReferenceReader,
        path: EchoPath | None = EchoPath(),
        *,
        noise_rms: float = 0.0,
        seed: int = 0,
    ) -> None:
        self._reader = reader
        self._echo = StreamingEcho(path) if path is not None else None
        self._noise_rms = noise_rms
        self._rng = np.random.default_rng(seed)
        self._lock = threading.Lock()
        self._voice: collections.deque[Frame] = collections.deque()
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        self.frames = 0  # frames delivered so far

    def say(self, samples: NDArray[np.int16]) -> None:
        """The person speaks ``samples`` (16 kHz), from the next frame on."""
        pad = (-len(samples)) % FRAME_SAMPLES
        padded = np.concatenate([samples, np.zeros(pad, np.int16)])
        with self._lock:
            for i in range(0, len(padded), FRAME_SAMPLES):
                self._voice.append(padded[i : i + FRAME_SAMPLES])

    @property
    def speaking(self) -> bool:
        with self._lock:
            return bool(self._voice)

    def start(self, sink: FrameSink) -> None:
        self._stop.clear()
        self._thread = threading.Thread(target=self._run, args=(sink,), daemon=True,
                                        name="anima-room")  # fmt: skip
        self._thread.start()

    def stop(self, timeout: float = 1.0) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)
            self._thread = None

    def next_frame(self) -> Frame:
        """One frame of the room now (what :meth:`start`'s thread delivers every 32 ms)."""
        take = self._reader.frame(FRAME_SAMPLES).astype(np.float64)
        mic = self._echo.push(take) if self._echo is not None else np.zeros(FRAME_SAMPLES)
        with self._lock:
            voice = self._voice.popleft() if self._voice else None
        if voice is not None:
            mic = mic + voice
        if self._noise_rms > 0:
            mic = mic + self._rng.standard_normal(FRAME_SAMPLES) * self._noise_rms
        self.frames += 1
        return to_int16(mic)

    def _run(self, sink: FrameSink) -> None:
        due = time.monotonic()
        while not self._stop.is_set():
            due += FRAME_S
            sink.frame(self.next_frame())
            wait = due - time.monotonic()
            if wait > 0:
                self._stop.wait(wait)
            elif wait < -1.0:  # a stall (a loaded machine): do not race to catch up
                due = time.monotonic()
        sink.end("stopped")
