"""Resampling, framing and the audio sources (WAV, raw PCM, push); no model needed."""

from __future__ import annotations

import os
import struct
import threading
import time
import tracemalloc
import wave
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from anima.audio import FRAME_SAMPLES, SAMPLE_RATE, Framer, StreamResampler, resample
from anima.errors import ConfigError, EngineStateError, MissingDependencyError, SpeechError
from anima.listening import MicrophoneSource, PushSource, RawPcmSource, WavSource
from anima.listening.sources import read_wav, write_wav
from anima.testing import eventually

pytestmark = pytest.mark.integration


@pytest.fixture(autouse=True)
def _listen_extra() -> None:
    """Overrides the folder's: these tests need no model."""


class Collect:
    def __init__(self) -> None:
        self.frames: list[Any] = []
        self.ended = threading.Event()
        self.reason = ""

    def frame(self, samples: Any) -> None:
        self.frames.append(samples)

    def end(self, reason: str) -> None:
        self.reason = reason
        self.ended.set()

    @property
    def audio(self) -> Any:
        return np.concatenate(self.frames) if self.frames else np.zeros(0, np.int16)


class Count:
    """A sink that keeps only how much it was given (a long file's frames are not kept)."""

    def __init__(self) -> None:
        self.samples = 0
        self.ended = threading.Event()

    def frame(self, samples: Any) -> None:
        self.samples += len(samples)

    def end(self, reason: str) -> None:
        self.ended.set()


def tone(hz: float, seconds: float, rate: int) -> Any:
    t = np.arange(round(seconds * rate)) / rate
    return (8000 * np.sin(2 * np.pi * hz * t)).astype(np.int16)


def peak_hz(samples: Any, rate: int) -> float:
    spectrum = np.abs(np.fft.rfft(samples * np.hanning(len(samples))))
    return float(np.argmax(spectrum) * rate / len(samples))


@pytest.mark.parametrize("rate", [22050, 44100, 48000, 8000])
def test_resampling_keeps_pitch_and_duration(rate: int) -> None:
    out = resample(tone(440.0, 1.0, rate), rate)
    assert len(out) == SAMPLE_RATE
    assert peak_hz(out, SAMPLE_RATE) == pytest.approx(440.0, abs=2.0)
    assert 7000 < np.abs(out[100:-100]).max() < 8300


def test_resampling_removes_what_16khz_cannot_carry() -> None:
    out = resample(tone(10000.0, 0.5, 44100), 44100)  # above the 8 kHz Nyquist: must not alias
    assert np.abs(out[100:-100]).max() < 400


def test_the_stream_resampler_matches_the_whole_signal_one() -> None:
    rng = np.random.default_rng(3)
    x = (rng.standard_normal(22050) * 3000).astype(np.int16)
    resampler = StreamResampler(22050)
    cuts = np.cumsum(rng.integers(1, 2000, 40))
    pieces = [resampler.feed(p) for p in np.split(x, cuts[cuts < len(x)])]
    streamed = np.concatenate(pieces)
    whole = resample(x, 22050)
    assert len(whole) - 20 <= len(streamed) <= len(whole)
    assert np.array_equal(streamed, whole[: len(streamed)])


def test_the_framer_cuts_exact_frames() -> None:
    framer = Framer()
    frames = framer.feed(np.arange(1000, dtype=np.int16)) + framer.feed(
        np.arange(100, dtype=np.int16)
    )
    assert [len(f) for f in frames] == [FRAME_SAMPLES, FRAME_SAMPLES]
    (last,) = framer.flush()
    assert len(last) == FRAME_SAMPLES
    assert last[75] == 99
    assert last[76] == 0
    assert framer.flush() == []


def test_a_wav_file_becomes_16khz_frames(tmp_path: Path) -> None:
    path = tmp_path / "tts.wav"
    write_wav(path, tone(300.0, 1.0, 22050), 22050)
    samples, rate = read_wav(path)
    assert rate == 22050
    assert len(samples) == 22050
    sink = Collect()
    source = WavSource(path)
    source.start(sink)
    assert sink.ended.wait(5)
    assert sink.reason == "eof"
    source.stop()
    assert all(len(f) == FRAME_SAMPLES for f in sink.frames)
    assert len(sink.audio) == -(-SAMPLE_RATE // FRAME_SAMPLES) * FRAME_SAMPLES
    assert peak_hz(sink.audio[:SAMPLE_RATE], SAMPLE_RATE) == pytest.approx(300.0, abs=2.0)


def test_a_wav_file_that_is_not_one_is_named(tmp_path: Path) -> None:
    bad = tmp_path / "bad.wav"
    bad.write_bytes(b"not a wav")
    with pytest.raises(SpeechError, match=r"bad\.wav"):
        WavSource(bad).start(Collect())


def test_a_wav_file_streams_exactly_what_the_whole_file_resampled_gives(tmp_path: Path) -> None:
    """Read and resampled a block at a time: the same samples as the whole file at once (up to
    the resampler's rounding), stereo averaged, the last frame zero-padded."""
    rng = np.random.default_rng(7)
    mono = (rng.standard_normal(round(1.3 * 44100)) * 3000).astype(np.int16)
    path = tmp_path / "stereo.wav"
    with wave.open(str(path), "wb") as wav:
        wav.setnchannels(2)
        wav.setsampwidth(2)
        wav.setframerate(44100)
        wav.writeframes(np.repeat(mono, 2).astype("<i2").tobytes())
    sink = Collect()
    source = WavSource(path)
    source.start(sink)
    assert sink.ended.wait(5)
    source.stop()
    whole = resample(mono, 44100)
    assert len(sink.audio) == -(-len(whole) // FRAME_SAMPLES) * FRAME_SAMPLES
    assert np.abs(sink.audio[: len(whole)].astype(int) - whole).max() <= 1
    assert not sink.audio[len(whole) :].any()


def test_a_long_wav_file_is_read_in_bounded_memory(tmp_path: Path) -> None:
    """Issue 30: the whole file was read and resampled at once, with an N × 32 matrix (1.8 GB
    for a minute at 44.1 kHz; 10 minutes crashed). Now a block at a time: the peak stays a few
    megabytes whatever the length (10 s here: 252 MB before, ~2.5 MB now)."""
    path = tmp_path / "long.wav"
    write_wav(path, np.tile(tone(440.0, 1.0, 44100), 10), 44100)
    sink = Count()
    tracemalloc.start()
    try:
        source = WavSource(path)
        source.start(sink)
        assert sink.ended.wait(10)
        source.stop()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert sink.samples == -(-10 * SAMPLE_RATE // FRAME_SAMPLES) * FRAME_SAMPLES
    assert peak < 8_000_000, f"peak {peak / 1e6:.1f} MB"


def _wav_header_rate(path: Path, rate: int) -> None:
    """A valid 16-bit WAV whose header says ``rate`` Hz (written at 16 kHz, patched)."""
    write_wav(path, np.zeros(100_000, np.int16))
    data = bytearray(path.read_bytes())
    data[24:28] = struct.pack("<I", rate)
    data[28:32] = struct.pack("<I", rate * 2)
    path.write_bytes(bytes(data))


@pytest.mark.parametrize("rate", [0, 1, 4000, 384_000])
def test_a_wav_file_with_an_absurd_rate_is_refused_in_one_line(tmp_path: Path, rate: int) -> None:
    """Issue 30: a 200 KB file whose header said 1 Hz asked for 11.9 GiB; 0 Hz gave a
    traceback. The rate must be 8-192 kHz, said before anything is read."""
    path = tmp_path / "odd.wav"
    _wav_header_rate(path, rate)
    with pytest.raises(ConfigError, match=rf"odd\.wav: a sample rate of {rate} Hz.*8000-192000"):
        WavSource(path).start(Collect())
    with pytest.raises(ConfigError, match="sample_rate"):
        WavSource(np.zeros(10, np.int16), sample_rate=rate).start(Collect())


def test_what_is_not_a_regular_file_is_refused_at_once(tmp_path: Path) -> None:
    """Issue 30: a FIFO hung the start (and SIGTERM with it): refused before it is opened,
    as are a directory and a device."""
    fifo = tmp_path / "voice.wav"
    os.mkfifo(fifo)
    t0 = time.monotonic()
    with pytest.raises(ConfigError, match=r"voice\.wav: a FIFO, not a WAV file"):
        WavSource(fifo).start(Collect())
    assert time.monotonic() - t0 < 0.5
    folder = tmp_path / "folder.wav"
    folder.mkdir()
    with pytest.raises(ConfigError, match="a directory"):
        WavSource(folder).start(Collect())
    with pytest.raises(ConfigError, match="a device"):
        WavSource("/dev/zero").start(Collect())
    with pytest.raises(SpeechError, match=r"missing\.wav: cannot read"):
        WavSource(tmp_path / "missing.wav").start(Collect())


def test_a_real_time_wav_source_stops_at_once() -> None:
    sink = Collect()
    source = WavSource(np.zeros(SAMPLE_RATE * 30, np.int16), sample_rate=SAMPLE_RATE, realtime=True)
    source.start(sink)
    assert eventually(lambda: len(sink.frames) >= 2)
    t0 = time.monotonic()
    source.stop(timeout=2.0)
    assert time.monotonic() - t0 < 1.0
    assert 2 <= len(sink.frames) < 30  # paced: a few 32 ms frames, not all 30 s at once
    assert not sink.ended.is_set()


def test_raw_pcm_from_a_pipe_and_stop_while_waiting() -> None:
    read_fd, write_fd = os.pipe()
    sink = Collect()
    with os.fdopen(read_fd, "rb") as stream:
        source = RawPcmSource(stream)
        source.start(sink)
        os.write(write_fd, np.arange(3 * FRAME_SAMPLES, dtype="<i2").tobytes()[:-1])  # odd bytes
        assert eventually(lambda: len(sink.frames) >= 2)
        t0 = time.monotonic()
        source.stop(timeout=2.0)  # blocked on the pipe: the stop pipe wakes it
        assert time.monotonic() - t0 < 1.0
    os.close(write_fd)
    assert len(sink.frames) == 2
    assert sink.frames[1][0] == FRAME_SAMPLES


def test_raw_pcm_ends_with_its_stream() -> None:
    read_fd, write_fd = os.pipe()
    os.write(write_fd, np.ones(FRAME_SAMPLES + 10, dtype="<i2").tobytes())
    os.close(write_fd)
    sink = Collect()
    with os.fdopen(read_fd, "rb") as stream:
        source = RawPcmSource(stream)
        source.start(sink)
        assert sink.ended.wait(5)
        assert sink.reason == "eof"
        source.stop()
    assert len(sink.frames) == 2  # the partial last frame is padded


def test_push_source_frames_resamples_and_refuses_when_stopped() -> None:
    source = PushSource()
    with pytest.raises(EngineStateError):
        source.push(np.zeros(10, np.int16))
    sink = Collect()
    source.start(sink)
    source.push(tone(440.0, 0.5, 22050), 22050)
    source.push_silence(0.1)
    source.end()
    assert sink.reason == "eof"
    assert all(len(f) == FRAME_SAMPLES for f in sink.frames)
    assert abs(len(sink.audio) - 0.6 * SAMPLE_RATE) <= FRAME_SAMPLES
    source.stop()
    with pytest.raises(EngineStateError):
        source.end()


def test_the_microphone_fails_with_a_clear_error_when_there_is_none() -> None:
    try:
        import sounddevice as sd

        devices = sd.query_devices()
    except (ImportError, OSError):
        with pytest.raises((MissingDependencyError, SpeechError)):
            MicrophoneSource().start(Collect())
        return
    if any(d["max_input_channels"] > 0 for d in devices):
        pytest.skip("this machine has a microphone")
    with pytest.raises(SpeechError, match="microphone"):
        MicrophoneSource().start(Collect())
