"""Audio sinks, each with a playback clock: the number of samples really played so far.

* :class:`NullSink` — no sound, paced in real time by the injected clock (the headless default).
* :class:`WavSink` — the same clock, and every utterance appended to a WAV file (valid after
  each write: :class:`WavFile`).
* :class:`SoundDeviceSink` — the sound card (sounddevice/PortAudio), clock from its callback.

Lips and sway are read against :meth:`AudioSink.played`, so they follow the audio when it starts
late, stalls (synthesis slower than playback) or is cut.
"""

from __future__ import annotations

import collections
import logging
import struct
import threading
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np

from anima.clock import Clock, MonotonicClock
from anima.config.speech_parts import SINKS, check_audio_out
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
    """The null sink's clock, and what was played (up to a stop) saved to a WAV file.

    The file is a valid WAV at the end of every :meth:`write`: samples are appended as they are
    written and the header's two sizes rewritten, then flushed, so a reader sees each utterance
    as soon as it is synthesized, not only at the next one or at exit. A :meth:`stop` cuts the
    file back to what was played. The rate is the first utterance's; a later utterance at
    another rate is written as it is, with a warning (one WAV has one rate).
    """

    name = "wav"

    def __init__(self, path: str | Path, clock: Clock | None = None) -> None:
        super().__init__(clock)
        self.path = Path(path)
        self._file_lock = threading.Lock()  # write (speech thread) vs stop (any thread)
        self._wav: WavFile | None = None
        self._utterance_start = 0  # frames in the file before the current utterance

    def start(self, sample_rate: int) -> None:
        with self._file_lock:
            if self._wav is None:
                self._wav = WavFile.create(self.path, sample_rate)
            elif self._wav.sample_rate != sample_rate:
                log.warning(
                    "%s is %d Hz; an utterance at %d Hz is written as it is",
                    self.path, self._wav.sample_rate, sample_rate,
                )  # fmt: skip
            self._utterance_start = self._wav.frames
            super().start(sample_rate)

    def write(self, samples: Samples) -> None:
        with self._file_lock:
            super().write(samples)
            if self._wav is not None and self._stopped_at is None:
                self._wav.append(samples)

    def stop(self) -> None:
        with self._file_lock:
            super().stop()
            if self._wav is not None:
                self._wav.truncate(self._utterance_start + self.written())

    def close(self) -> None:
        self.stop()
        with self._file_lock:
            if self._wav is not None:
                self._wav.close()
                self._wav = None


class WavFile:
    """A mono 16-bit PCM WAV file whose header is right after every call.

    Layout (RIFF, little-endian): ``RIFF`` <file size − 8> ``WAVE``, a 16-byte ``fmt `` chunk
    (PCM 1, channels 1, rate, byte rate, block align 2, 16 bits), then ``data`` <data size>
    and the samples. Only the two sizes change as samples come and go.
    """

    HEADER = 44  # bytes before the first sample
    MAX_DATA = 0xFFFF_FFFF - HEADER  # the 32-bit sizes' limit (~27 h at 22.05 kHz)

    def __init__(self, path: Path, file: BinaryIO, sample_rate: int) -> None:
        self.path = path
        self.sample_rate = sample_rate
        self.frames = 0
        self._file = file
        self._full = False

    @classmethod
    def create(cls, path: Path, sample_rate: int) -> WavFile:
        try:
            file = path.open("wb")
            header = struct.pack(
                "<4sI4s4sIHHIIHH4sI",
                b"RIFF", 36, b"WAVE", b"fmt ", 16, 1, 1, sample_rate, 2 * sample_rate, 2, 16,
                b"data", 0,
            )  # fmt: skip
            file.write(header)
            file.flush()
        except OSError as exc:
            raise SpeechError(f"cannot write {path}: {exc}") from exc
        return cls(path, file, sample_rate)

    def append(self, samples: Samples) -> None:
        data = np.asarray(samples, dtype="<i2").tobytes()
        if 2 * self.frames + len(data) > self.MAX_DATA:
            if not self._full:
                log.warning("%s is full (4 GB): later audio is not saved", self.path)
                self._full = True
            return
        self._file.seek(self.HEADER + 2 * self.frames)
        self._write(data)
        self.frames += len(data) // 2
        self._patch()

    def truncate(self, frames: int) -> None:
        """Keep the first ``frames`` samples."""
        if frames >= self.frames:
            return
        self.frames = max(0, frames)
        try:
            self._file.truncate(self.HEADER + 2 * self.frames)
        except OSError as exc:
            raise SpeechError(f"cannot write {self.path}: {exc}") from exc
        self._patch()

    def _patch(self) -> None:
        """Rewrite the RIFF and data sizes, and flush: the file is valid from here on."""
        size = 2 * self.frames
        self._file.seek(4)
        self._write(struct.pack("<I", 36 + size))
        self._file.seek(40)
        self._write(struct.pack("<I", size))
        try:
            self._file.flush()
        except OSError as exc:
            raise SpeechError(f"cannot write {self.path}: {exc}") from exc

    def _write(self, data: bytes) -> None:
        try:
            self._file.write(data)
        except OSError as exc:
            raise SpeechError(f"cannot write {self.path}: {exc}") from exc

    def close(self) -> None:
        self._file.close()


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


def _auto(clock: Clock | None) -> AudioSink:
    """The sound card when there is one, else the null sink."""
    return SoundDeviceSink() if SoundDeviceSink.available() else NullSink(clock)


def _null(clock: Clock | None) -> AudioSink:
    return NullSink(clock)


def _sounddevice(_clock: Clock | None) -> AudioSink:
    return SoundDeviceSink()


def choose_sink(audio_out: str | None, clock: Clock | None = None) -> AudioSink:
    """The sink ``audio_out`` names (None is ``auto``: the sound card when there is one, else
    the null sink), or a :class:`WavSink` writing that ``.wav`` path."""
    name = audio_out or "auto"
    if name in SINKS.entries:
        made: AudioSink = SINKS.load(name)(clock)
        return made
    check_audio_out(name)
    return WavSink(name, clock)
