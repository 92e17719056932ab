"""WAV files: :class:`WavSource` (a file or an array as a stream of 16 kHz frames), and reading,
writing and checking WAV files."""

from __future__ import annotations

import logging
import os
import stat
import time
import wave
from collections.abc import Iterator
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from anima.audio import (
    FRAME_S,
    MAX_INPUT_RATE,
    MIN_INPUT_RATE,
    SAMPLE_RATE,
    Frame,
    Framer,
    StreamResampler,
)
from anima.errors import ConfigError, SpeechError
from anima.listening.sources.base import FrameSink, MultiFrameSink, ThreadedSource

logger = logging.getLogger(__name__)


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


class WavSource(ThreadedSource):
    """A WAV file (or samples at any rate) as a stream of 16 kHz frames.

    ``realtime=False`` delivers as fast as the sink takes frames (the listener's timeouts run on
    audio time, so tests stay exact); ``realtime=True`` paces one frame per 32 ms. The last
    partial frame is zero-padded; then the sink gets ``end("eof")``.

    A file of several channels (a microphone array's recording) is heard as their mean; with
    ``multi`` (a :class:`~anima.listening.sources.base.MultiFrameSink`) each frame of all the
    channels goes there too, just before its mean goes to the sink (an array of samples ×
    channels does the same).

    The file is read and resampled a block at a time on the source's thread, so memory stays
    bounded whatever its length (the whole file resampled at once took 1.8 GB for a minute at
    44.1 kHz, and stalled the motion loop). ``start`` refuses, with a
    :class:`~anima.errors.ConfigError` naming the file, what is not a regular file (a FIFO would
    block the start; a device never ends) and a rate outside
    :data:`~anima.audio.MIN_INPUT_RATE`-:data:`~anima.audio.MAX_INPUT_RATE`
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
        multi: MultiFrameSink | None = None,  # every channel of each frame, for the array
    ) -> None:
        super().__init__()
        self._audio = audio
        self._rate = sample_rate
        self.realtime = realtime
        self.multi = multi
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
        """The input, a block (samples × channels) at a time, with its rate."""
        if self._reader is None:
            samples = np.asarray(self._audio, dtype=np.int16)
            samples = samples if samples.ndim == 2 else samples.reshape(-1, 1)
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
            yield np.frombuffer(data, dtype="<i2").astype(np.int16).reshape(-1, channels), rate

    def _run(self, sink: FrameSink) -> None:
        framer = Framer()
        resampler: StreamResampler | None = None
        channels: ChannelFramer | None = None
        start = time.monotonic()
        n = 0

        def deliver(frames: list[Frame], multi: list[Frame]) -> bool:
            nonlocal n
            for k, frame in enumerate(frames):
                if self.realtime:
                    if self._stopping.wait(max(0.0, start + n * FRAME_S - time.monotonic())):
                        return False
                elif self._stopping.is_set():
                    return False
                if self.multi is not None and k < len(multi):
                    self.multi.frame(multi[k])
                sink.frame(frame)
                n += 1
            return True

        for block, rate in self._blocks():
            resampler = resampler or StreamResampler(rate)
            mono = block[:, 0] if block.shape[1] == 1 else block.mean(axis=1).astype(np.int16)
            multi: list[Frame] = []
            if self.multi is not None:
                channels = channels or ChannelFramer(rate, block.shape[1])
                multi = channels.feed(block)
            if not deliver(framer.feed(resampler.feed(mono)), multi):
                return
        tail = resampler.flush() if resampler is not None else np.zeros(0, np.int16)
        rest = channels.flush() if channels is not None else []
        if deliver(framer.feed(tail) + framer.flush(), rest):
            if self.multi is not None:
                self.multi.end("eof")
            sink.end("eof")


class ChannelFramer:
    """Every channel of a multichannel stream resampled and framed as its mono mix is, so the
    two give frames that pair up (``FRAME_SAMPLES`` × channels)."""

    def __init__(self, rate: int, count: int) -> None:
        self._resamplers = [StreamResampler(rate) for _ in range(count)]
        self._framers = [Framer() for _ in range(count)]

    def feed(self, block: NDArray[np.int16]) -> list[Frame]:
        return self._stack([f.feed(r.feed(block[:, c])) for c, (r, f) in enumerate(self._pairs())])

    def flush(self) -> list[Frame]:
        return self._stack([f.feed(r.flush()) + f.flush() for r, f in self._pairs()])

    def _pairs(self) -> list[tuple[StreamResampler, Framer]]:
        return list(zip(self._resamplers, self._framers, strict=True))

    @staticmethod
    def _stack(per_channel: list[list[Frame]]) -> list[Frame]:
        return [np.stack(frames, axis=1) for frames in zip(*per_channel, strict=True)]


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
