"""Audio sinks, each with a playback clock: the number of samples really played so far.

* :class:`NullSink` — no sound, paced in real time by the injected clock (the headless default).
* :class:`WavSink` — the same clock, and every utterance appended to a WAV file.
* :class:`SoundDeviceSink` — the sound card (sounddevice/PortAudio), clock from its callback.

Lips and sway are read against :meth:`AudioSink.played`, so they follow the audio when it starts
late, stalls (synthesis slower than playback) or is cut.
"""

from __future__ import annotations

import collections
import logging
import threading
import wave
from pathlib import Path
from typing import Any

import numpy as np

from anima.clock import Clock, MonotonicClock
from anima.errors import MissingDependencyError, SpeechError
from anima.speech.base import AudioSink, Samples

log = logging.getLogger(__name__)


def import_sounddevice(extra: str, user: str) -> Any:
    """The ``sounddevice`` module, or a specific error: its pip package is missing (install
    ``anima[extra]``) or PortAudio's C library is (Debian ``libportaudio2``, which ``make run``
    installs when root). ``user`` names who needs it in the message (``microphone``…)."""
    try:
        import sounddevice as sd  # type: ignore[import-not-found, unused-ignore]
    except ImportError as exc:
        raise MissingDependencyError("sounddevice", extra) from exc
    except OSError as exc:  # the module imports but PortAudio's library is missing
        raise SpeechError(f"{user}: {exc}; install Debian libportaudio2") from exc
    return sd


class NullSink:
    """Plays nothing, in real time: the clock advances while queued audio lasts.

    When the queue runs dry (synthesis slower than real time) playback stalls, and resumes
    when more samples arrive — exactly what a sound card does.
    """

    name = "null"

    def __init__(self, clock: Clock | None = None, *, keep: bool = False) -> None:
        self._clock = clock or MonotonicClock(spin_s=0.0)
        self._keep = keep  # keep the current utterance's samples (benchmarks, tests)
        self.kept: list[Samples] = []
        self._lock = threading.Lock()
        self._rate = 22050
        self._written = 0
        self._base_pos = 0  # played samples at _base_time
        self._base_time = 0.0
        self._stopped_at: int | None = None

    def start(self, sample_rate: int) -> None:
        with self._lock:
            self._rate = sample_rate
            self._written = 0
            self._base_pos = 0
            self._base_time = self._clock.now()
            self._stopped_at = None
            self.kept = []

    def _played_locked(self, now: float) -> int:
        if self._stopped_at is not None:
            return self._stopped_at
        return min(self._written, self._base_pos + int((now - self._base_time) * self._rate))

    def write(self, samples: Samples) -> None:
        with self._lock:
            if self._stopped_at is not None:
                return
            now = self._clock.now()
            played = self._played_locked(now)
            if played >= self._written:  # starved (or first write): playback restarts now
                self._base_pos, self._base_time = played, now
            self._written += len(samples)
            if self._keep:
                self.kept.append(samples)

    def played(self) -> int:
        with self._lock:
            return self._played_locked(self._clock.now())

    def written(self) -> int:
        return self._written

    def stop(self) -> None:
        with self._lock:
            if self._stopped_at is None:
                self._stopped_at = self._played_locked(self._clock.now())
                self._written = self._stopped_at

    def close(self) -> None:
        self.stop()


class WavSink(NullSink):
    """The null sink's clock, and what was played (up to a stop) saved to a WAV file."""

    name = "wav"

    def __init__(self, path: str | Path, clock: Clock | None = None) -> None:
        super().__init__(clock)
        self.path = Path(path)
        self._wav: wave.Wave_write | None = None
        self._pending: collections.deque[Samples] = collections.deque()
        self._pending_len = 0

    def start(self, sample_rate: int) -> None:
        self._flush()
        if self._wav is None:
            try:
                self._wav = wave.open(str(self.path), "wb")  # noqa: SIM115  # closed in close()
            except OSError as exc:
                raise SpeechError(f"cannot write {self.path}: {exc}") from exc
            self._wav.setnchannels(1)
            self._wav.setsampwidth(2)
            self._wav.setframerate(sample_rate)
        super().start(sample_rate)

    def write(self, samples: Samples) -> None:
        super().write(samples)
        self._pending.append(samples)
        self._pending_len += len(samples)

    def _flush(self) -> None:
        """Write what was played of the current utterance (all of it unless stopped)."""
        if self._wav is None or not self._pending:
            return
        keep = self.written()
        data = np.concatenate(list(self._pending))[:keep]
        self._wav.writeframes(data.astype("<i2").tobytes())
        self._pending.clear()
        self._pending_len = 0

    def close(self) -> None:
        super().close()
        self._flush()
        if self._wav is not None:
            self._wav.close()
            self._wav = None


class SoundDeviceSink:
    """The default sound card through sounddevice; the clock counts frames the card consumed."""

    name = "sounddevice"

    def __init__(self, device: int | str | None = None, buffer_s: float = 0.3) -> None:
        self._device = device
        self._buffer_s = buffer_s
        self._lock = threading.Lock()
        self._queue: collections.deque[Samples] = collections.deque()
        self._offset = 0  # within the first queued block
        self._played = 0
        self._written = 0
        self._stream: Any = None
        self._rate = 0
        self._room = threading.Condition(self._lock)

    @staticmethod
    def available() -> bool:
        """True when sounddevice imports and a default output device exists."""
        try:
            import sounddevice as sd  # type: ignore[import-not-found, unused-ignore]

            return sd.query_devices(kind="output") is not None
        except Exception:  # no PortAudio, no device: not available
            return False

    def start(self, sample_rate: int) -> None:
        sd = import_sounddevice("audio", "sound card")
        with self._lock:
            self._queue.clear()
            self._offset = self._played = self._written = 0
        if self._stream is None or self._rate != sample_rate:
            if self._stream is not None:
                self._stream.close()
            self._rate = sample_rate
            self._stream = sd.OutputStream(
                samplerate=sample_rate,
                channels=1,
                dtype="int16",
                device=self._device,
                callback=self._callback,
            )
            self._stream.start()

    def _callback(self, out: Any, frames: int, _time: Any, _status: Any) -> None:
        with self._lock:
            filled = 0
            while filled < frames and self._queue:
                block = self._queue[0]
                take = min(frames - filled, len(block) - self._offset)
                out[filled : filled + take, 0] = block[self._offset : self._offset + take]
                filled += take
                self._offset += take
                if self._offset >= len(block):
                    self._queue.popleft()
                    self._offset = 0
            out[filled:, 0] = 0
            self._played += filled
            self._room.notify_all()

    def write(self, samples: Samples) -> None:
        with self._lock:
            limit = int(self._buffer_s * self._rate)
            while self._written - self._played > limit and self._stream is not None:
                self._room.wait(0.05)
            self._queue.append(samples)
            self._written += len(samples)

    def played(self) -> int:
        return self._played

    def written(self) -> int:
        return self._written

    def stop(self) -> None:
        with self._lock:
            self._queue.clear()
            self._offset = 0
            self._written = self._played

    def close(self) -> None:
        self.stop()
        if self._stream is not None:
            self._stream.close()
            self._stream = None


def choose_sink(audio_out: str | None, clock: Clock | None = None) -> AudioSink:
    """``None``/``"auto"``: the sound card when there is one, else the null sink;
    ``"null"``; ``"sounddevice"``; anything else is a WAV file path."""
    if audio_out in (None, "auto"):
        if SoundDeviceSink.available():
            return SoundDeviceSink()
        return NullSink(clock)
    if audio_out == "null":
        return NullSink(clock)
    if audio_out == "sounddevice":
        return SoundDeviceSink()
    return WavSink(audio_out, clock)
