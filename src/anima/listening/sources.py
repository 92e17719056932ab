"""Audio sources: where the listener's 16 kHz frames come from.

A source delivers frames of :data:`~anima.listening.audio.FRAME_SAMPLES` samples at 16 kHz mono
int16 to a :class:`FrameSink`, on a thread it owns (or the caller's, for :class:`PushSource`),
and says when its audio has ended. ``start`` opens the device or file; ``stop(timeout)`` ends the
thread and returns within ``timeout``. Constructors touch nothing.

- :class:`MicrophoneSource`: the default input device through ``sounddevice`` (``listen`` extra,
  Debian ``libportaudio2``); resampled when the device will not run at 16 kHz.
- :class:`WavSource`: a WAV file or an array, resampled as needed (anima's TTS makes 22.05 kHz);
  as fast as the listener takes it, or paced in real time for demos and benchmarks.
- :class:`RawPcmSource`: raw 16-bit little-endian mono PCM from a binary stream (stdin):
  ``arecord -f S16_LE -r 16000 -c 1 | anima …``.
- :class:`PushSource`: whatever a caller pushes (tests, a network stream, an echo canceller).
"""

from __future__ import annotations

import io
import logging
import os
import select
import stat
import sys
import threading
import time
import wave
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO, Protocol, runtime_checkable

import numpy as np
from numpy.typing import NDArray

from anima.errors import ConfigError, EngineStateError, SpeechError
from anima.listening.audio import (
    FRAME_S,
    MAX_INPUT_RATE,
    MIN_INPUT_RATE,
    SAMPLE_RATE,
    Frame,
    Framer,
    StreamResampler,
)

logger = logging.getLogger(__name__)


class FrameSink(Protocol):
    """What a source delivers to; both methods must return quickly (they only enqueue)."""

    def frame(self, samples: Frame) -> None:
        """One frame of 16 kHz mono int16 audio, in stream order."""
        ...

    def end(self, reason: str) -> None:
        """The source has no more audio (``eof``, ``error: …``); no frame follows."""
        ...


@runtime_checkable
class AudioSource(Protocol):
    """A stream of 16 kHz frames with an owned lifetime."""

    name: str

    def start(self, sink: FrameSink) -> None:
        """Open the input and begin delivering frames to ``sink``."""
        ...

    def stop(self, timeout: float = 1.0) -> None:
        """Stop delivering and release the input; returns within ``timeout`` seconds."""
        ...


def read_wav(path: str | Path) -> tuple[NDArray[np.int16], int]:
    """A 16-bit PCM WAV file's samples (channels averaged to mono) and sample rate."""
    try:
        with wave.open(str(path), "rb") as wav:
            width, channels, rate = wav.getsampwidth(), wav.getnchannels(), wav.getframerate()
            data = wav.readframes(wav.getnframes())
    except (OSError, EOFError, wave.Error) as exc:
        raise SpeechError(f"{path}: cannot read WAV audio: {exc}") from exc
    if width != 2:
        raise SpeechError(f"{path}: {8 * width}-bit WAV; only 16-bit PCM is supported")
    samples = np.frombuffer(data, dtype="<i2").astype(np.int16)
    if channels > 1:
        samples = samples.reshape(-1, channels).mean(axis=1).astype(np.int16)
    return samples, rate


def write_wav(path: str | Path, samples: NDArray[np.int16], rate: int = SAMPLE_RATE) -> None:
    """Write mono int16 ``samples`` as a 16-bit PCM WAV file."""
    with wave.open(str(path), "wb") as wav:
        wav.setnchannels(1)
        wav.setsampwidth(2)
        wav.setframerate(rate)
        wav.writeframes(np.asarray(samples, dtype="<i2").tobytes())


class _ThreadedSource:
    """The owned thread shared by the file and stream sources."""

    name = "threaded"

    def __init__(self) -> None:
        self._thread: threading.Thread | None = None
        self._stopping = threading.Event()

    def start(self, sink: FrameSink) -> None:
        if self._thread is not None:
            raise EngineStateError(f"{self.name} source: already started")
        self._prepare()
        self._stopping.clear()
        self._thread = threading.Thread(
            target=self._guarded, args=(sink,), name=f"anima-listen-{self.name}", daemon=True
        )
        self._thread.start()

    def stop(self, timeout: float = 1.0) -> None:
        thread, self._thread = self._thread, None
        if thread is None:
            return
        self._stopping.set()
        self._interrupt()
        thread.join(timeout)
        if thread.is_alive():
            logger.warning("%s source: its thread did not stop within %.1f s", self.name, timeout)
        else:
            self._release()

    def _guarded(self, sink: FrameSink) -> None:
        try:
            self._run(sink)
        except Exception as exc:
            logger.exception("%s source failed", self.name)
            sink.end(f"error: {exc}")

    def _prepare(self) -> None:
        """Open what ``_run`` reads (on the caller's thread, so errors reach ``start``)."""

    def _interrupt(self) -> None:
        """Wake ``_run`` if it blocks on something other than ``_stopping``."""

    def _release(self) -> None:
        """Close what ``_prepare`` opened (the thread has ended)."""

    def _run(self, sink: FrameSink) -> None:
        raise NotImplementedError


class WavSource(_ThreadedSource):
    """A WAV file (or samples at any rate) as a stream of 16 kHz frames.

    ``realtime=False`` delivers as fast as the sink takes frames (the listener's timeouts run on
    audio time, so tests stay exact); ``realtime=True`` paces one frame per 32 ms. The last
    partial frame is zero-padded; then the sink gets ``end("eof")``.

    The file is read and resampled a block at a time on the source's thread, so memory stays
    bounded whatever its length (the whole file resampled at once took 1.8 GB for a minute at
    44.1 kHz, and stalled the motion loop). ``start`` refuses, with a
    :class:`~anima.errors.ConfigError` naming the file, what is not a regular file (a FIFO would
    block the start; a device never ends) and a rate outside
    :data:`~anima.listening.audio.MIN_INPUT_RATE`-:data:`~anima.listening.audio.MAX_INPUT_RATE`
    (a header that says 1 Hz would be resampled into gigabytes).
    """

    name = "wav"
    BLOCK_S = 0.1  # seconds of input read and resampled at a time (~2 MB of temporaries)

    def __init__(
        self,
        audio: str | Path | NDArray[np.int16],
        *,
        sample_rate: int | None = None,  # Hz of ``audio`` when it is an array
        realtime: bool = False,
    ) -> None:
        super().__init__()
        self._audio = audio
        self._rate = sample_rate
        self.realtime = realtime
        self._reader: wave.Wave_read | None = None

    def _prepare(self) -> None:
        if isinstance(self._audio, (str, Path)):
            self._reader = open_wav(self._audio)
        elif self._rate is None:
            raise ValueError("WavSource: give sample_rate with an array")
        else:
            check_rate(self._rate, "WavSource: sample_rate")

    def _release(self) -> None:
        reader, self._reader = self._reader, None
        if reader is not None:
            reader.close()

    def _blocks(self) -> Iterator[tuple[NDArray[np.int16], int]]:
        """The input, mono, a block at a time, with its rate."""
        if self._reader is None:
            samples = np.asarray(self._audio, dtype=np.int16).ravel()
            assert self._rate is not None
            step = max(1, round(self.BLOCK_S * self._rate))
            for begin in range(0, len(samples), step):
                yield samples[begin : begin + step], self._rate
            return
        reader = self._reader
        rate, channels = reader.getframerate(), reader.getnchannels()
        step = max(1, round(self.BLOCK_S * rate))
        odd = b""  # a frame cut by a short read (a file truncated mid-frame)
        while data := reader.readframes(step):
            data, odd = odd + data, b""
            cut = len(data) - len(data) % (2 * channels)
            data, odd = data[:cut], data[cut:]
            block = np.frombuffer(data, dtype="<i2")
            if channels > 1:
                block = block.reshape(-1, channels).mean(axis=1)
            yield block.astype(np.int16), rate

    def _run(self, sink: FrameSink) -> None:
        framer = Framer()
        resampler: StreamResampler | None = None
        start = time.monotonic()
        n = 0

        def deliver(frames: list[Frame]) -> bool:
            nonlocal n
            for frame in frames:
                if self.realtime:
                    if self._stopping.wait(max(0.0, start + n * FRAME_S - time.monotonic())):
                        return False
                elif self._stopping.is_set():
                    return False
                sink.frame(frame)
                n += 1
            return True

        for block, rate in self._blocks():
            resampler = resampler or StreamResampler(rate)
            if not deliver(framer.feed(resampler.feed(block))):
                return
        tail = resampler.flush() if resampler is not None else np.zeros(0, np.int16)
        if deliver(framer.feed(tail) + framer.flush()):
            sink.end("eof")


def check_rate(rate: int, what: str) -> None:
    """ConfigError unless ``rate`` (Hz) is one audio input can have."""
    if not MIN_INPUT_RATE <= rate <= MAX_INPUT_RATE:
        raise ConfigError(
            f"{what}: a sample rate of {rate} Hz; audio input must be "
            f"{MIN_INPUT_RATE}-{MAX_INPUT_RATE} Hz"
        )


def check_wav(path: str | Path) -> None:
    """:func:`open_wav`'s refusals for a file that is there (nothing for one that is not yet:
    the source's start says so), without reading its audio."""
    if os.path.lexists(path):
        open_wav(path).close()


def open_wav(path: str | Path) -> wave.Wave_read:
    """``path`` opened for reading, once it is known to be a regular file holding 16-bit PCM
    at a rate :func:`check_rate` allows; ConfigError (what is wrong with it) or SpeechError
    (it cannot be read) otherwise."""
    try:
        mode = os.stat(path).st_mode
    except OSError as exc:
        raise SpeechError(f"{path}: cannot read WAV audio: {exc.strerror or exc}") from exc
    if not stat.S_ISREG(mode):
        kind = "a FIFO" if stat.S_ISFIFO(mode) else "a directory" if stat.S_ISDIR(mode) else (
            "a device or socket"
        )  # fmt: skip
        raise ConfigError(f"{path}: {kind}, not a WAV file (use --audio-in stdin for a stream)")
    try:
        reader = wave.open(str(path), "rb")  # noqa: SIM115 (returned open: the source reads it)
    except (OSError, EOFError, wave.Error) as exc:
        raise SpeechError(f"{path}: cannot read WAV audio: {exc}") from exc
    try:
        width, rate = reader.getsampwidth(), reader.getframerate()
        if width != 2:
            raise SpeechError(f"{path}: {8 * width}-bit WAV; only 16-bit PCM is supported")
        check_rate(rate, str(path))
    except BaseException:
        reader.close()
        raise
    return reader


class RawPcmSource(_ThreadedSource):
    """Raw 16-bit little-endian mono PCM read from a binary stream (stdin by default).

    The reader waits on the stream and on a stop pipe together (``select``), so ``stop`` wakes it
    at once even while no audio comes. ``sample_rate`` is the stream's rate.
    """

    name = "stdin"

    def __init__(self, stream: BinaryIO | None = None, *, sample_rate: int = SAMPLE_RATE) -> None:
        super().__init__()
        self._stream = stream
        self.sample_rate = sample_rate
        self._wake_r = self._wake_w = -1

    def _prepare(self) -> None:
        self._wake_r, self._wake_w = os.pipe()

    def _interrupt(self) -> None:
        os.write(self._wake_w, b"x")

    def _release(self) -> None:
        os.close(self._wake_r)
        os.close(self._wake_w)
        self._wake_r = self._wake_w = -1

    def _run(self, sink: FrameSink) -> None:
        stream = self._stream or sys.stdin.buffer
        try:
            fd = stream.fileno()
        except (io.UnsupportedOperation, AttributeError):
            fd = -1
        resampler = StreamResampler(self.sample_rate)
        framer = Framer()
        odd = b""
        while not self._stopping.is_set():
            if fd >= 0:
                ready, _, _ = select.select([fd, self._wake_r], [], [])
                if self._wake_r in ready:
                    return
                data = os.read(fd, 4096)
            else:
                data = stream.read(4096)
            if not data:
                break
            data, odd = odd + data, b""
            if len(data) % 2:
                data, odd = data[:-1], data[-1:]
            block = np.frombuffer(data, dtype="<i2").astype(np.int16)
            for frame in framer.feed(resampler.feed(block)):
                sink.frame(frame)
        for frame in framer.flush():
            sink.frame(frame)
        sink.end("eof")


class PushSource:
    """Audio pushed by the caller, delivered on the caller's thread (the sink only enqueues).

    ``push`` takes any block size at any rate; ``end`` ends the stream. Pushing before ``start``
    or after ``stop`` raises :class:`~anima.errors.EngineStateError`.
    """

    name = "push"

    def __init__(self) -> None:
        self._sink: FrameSink | None = None
        self._lock = threading.Lock()
        self._framer = Framer()
        self._resamplers: dict[int, StreamResampler] = {}

    def start(self, sink: FrameSink) -> None:
        with self._lock:
            self._sink = sink

    def stop(self, timeout: float = 1.0) -> None:
        with self._lock:
            self._sink = None

    def push(self, samples: NDArray[np.int16], sample_rate: int = SAMPLE_RATE) -> None:
        """Deliver ``samples`` (mono int16 at ``sample_rate`` Hz) as whole 16 kHz frames."""
        with self._lock:
            sink = self._require()
            if sample_rate != SAMPLE_RATE:
                resampler = self._resamplers.setdefault(sample_rate, StreamResampler(sample_rate))
                samples = resampler.feed(samples)
            for frame in self._framer.feed(samples):
                sink.frame(frame)

    def push_silence(self, seconds: float) -> None:
        """Deliver ``seconds`` of digital silence."""
        self.push(np.zeros(round(seconds * SAMPLE_RATE), dtype=np.int16))

    def end(self, reason: str = "eof") -> None:
        """Flush the last partial frame (zero-padded) and end the stream."""
        with self._lock:
            sink = self._require()
            for frame in self._framer.flush():
                sink.frame(frame)
            sink.end(reason)

    def _require(self) -> FrameSink:
        if self._sink is None:
            raise EngineStateError("push source: not started (or stopped)")
        return self._sink


class MicrophoneSource:
    """The microphone through PortAudio (``sounddevice``): 16 kHz if the device allows it,
    otherwise its default rate resampled here. Frames come from PortAudio's callback thread,
    which the stream owns; ``stop`` closes the stream."""

    name = "microphone"

    def __init__(self, *, device: int | str | None = None, block_s: float = FRAME_S) -> None:
        self.device = device  # sounddevice's device index or name substring; None: the default
        self.block_s = block_s  # seconds per PortAudio callback
        self._stream: Any = None  # sounddevice.InputStream (untyped)

    def start(self, sink: FrameSink) -> None:
        from anima.speech.sinks import import_sounddevice  # here: anima.speech imports config

        sd = import_sounddevice("listen", "microphone")
        rate = SAMPLE_RATE
        try:
            sd.check_input_settings(device=self.device, channels=1, dtype="int16", samplerate=rate)
        except Exception:
            try:
                rate = int(sd.query_devices(self.device, "input")["default_samplerate"])
            except Exception as exc:
                raise SpeechError(f"microphone: no input device {self.device!r} ({exc})") from exc
            logger.info("microphone: no 16 kHz input; recording at %d Hz and resampling", rate)
        resampler = StreamResampler(rate)
        framer = Framer()

        def callback(indata: NDArray[np.int16], frames: int, when: object, status: object) -> None:
            if status:
                logger.debug("microphone: %s", status)
            for frame in framer.feed(resampler.feed(indata[:, 0])):
                sink.frame(frame)

        try:
            stream = sd.InputStream(
                samplerate=rate, channels=1, dtype="int16", device=self.device,
                blocksize=round(rate * self.block_s), callback=callback,
                finished_callback=lambda: sink.end("eof"),
            )  # fmt: skip
            stream.start()
        except Exception as exc:
            raise SpeechError(f"microphone: cannot open the input ({exc})") from exc
        self._stream = stream

    def stop(self, timeout: float = 1.0) -> None:
        stream, self._stream = self._stream, None
        if stream is None:
            return
        try:
            stream.close()
        except Exception:
            logger.exception("microphone: closing the stream failed")
