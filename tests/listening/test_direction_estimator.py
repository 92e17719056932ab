"""The direction estimator's gates (speech, the robot's own voice, a barge-in), its sink's
thread, the multichannel sources that feed it, and ``listen.mics``."""

from __future__ import annotations

import math
import threading
import wave
from pathlib import Path

import numpy as np
import pytest
from numpy.typing import NDArray

from anima.audio import FRAME_S, FRAME_SAMPLES, Frame
from anima.config.listening import ListenConfig
from anima.errors import ConfigError
from anima.listening.direction.estimator import (
    ONSET_DB,
    ONSET_FRAMES,
    DirectionEstimator,
    DirectionSink,
)
from anima.listening.direction.own_voice import OWN_HOLD_S
from anima.listening.direction.types import VoiceDirection
from anima.listening.sources import WavSource
from anima.speech.reference import PlaybackReference
from anima.speech.sinks import NullSink
from anima.testing import FakeClock
from anima.testing.array_room import LINEAR_4 as LINEAR
from anima.testing.array_room import SQUARE_4 as SQUARE
from anima.testing.array_room import plane_wave

pytestmark = pytest.mark.fast


def frames_of(signal: NDArray[np.float64]) -> list[NDArray[np.int16]]:
    n = len(signal) // FRAME_SAMPLES
    return [
        np.round(signal[k * FRAME_SAMPLES : (k + 1) * FRAME_SAMPLES]).astype(np.int16)
        for k in range(n)
    ]


def voice(degrees: float, seconds: float = 1.0, level: float = 3000.0) -> list[NDArray[np.int16]]:
    n = round(seconds / FRAME_S) * FRAME_SAMPLES
    return frames_of(
        level * plane_wave(LINEAR, math.radians(degrees), n=n, seed=int(degrees) + 200)
    )


def silence(seconds: float, level: float = 3.0) -> list[NDArray[np.int16]]:
    n = round(seconds / FRAME_S) * FRAME_SAMPLES
    return frames_of(level * np.random.default_rng(5).standard_normal((n, len(LINEAR))))


def test_speech_frames_are_handed_on_with_their_direction() -> None:
    got: list[VoiceDirection] = []
    estimator = DirectionEstimator(LINEAR, got.append, onset_db=0)
    frames = voice(35.0)
    for k, frame in enumerate(frames):
        estimator.frame(frame, k * FRAME_S, speech=True)
    assert len(got) == len(frames) - estimator.window_frames + 1  # once the window is full
    assert all(abs(math.degrees(d.azimuth) - 35.0) < 1.5 for d in got)
    assert all(d.speech and not d.own_voice and d.confidence > 0.5 for d in got)
    assert estimator.targets == len(got)
    assert not any(d.on_head for d in got)
    assert {d.span_s for d in got} == {estimator.window_frames * FRAME_S}
    assert got[-1].heard_at == pytest.approx(got[-1].t - estimator.window_frames * FRAME_S / 2)


def test_an_array_on_the_head_hands_on_its_directions_in_the_heads_frame() -> None:
    got: list[VoiceDirection] = []
    estimator = DirectionEstimator(LINEAR, got.append, onset_db=0, on_head=True)
    for k, frame in enumerate(voice(-20.0, seconds=0.5)):
        estimator.frame(frame, k * FRAME_S, speech=True)
    assert got
    assert all(d.on_head and abs(math.degrees(d.azimuth) + 20.0) < 1.5 for d in got)


def run(estimator: DirectionEstimator, frames: list[NDArray[np.int16]], start: int = 0) -> int:
    for k, frame in enumerate(frames, start=start):
        estimator.frame(frame, k * FRAME_S, speech=True)
    return start + len(frames)


def test_onsets_summed_hand_on_a_faint_voice_more_often_and_more_exactly() -> None:
    """A voice 6 dB under the noise: many windows alone are under min_confidence; their
    whitened cross spectra summed are not (measured: 18 → 27 of 28, median error 1.7° →
    0.6°)."""
    n = round(1.0 / FRAME_S) * FRAME_SAMPLES
    noise = 1000.0 * np.random.default_rng(3).standard_normal((n, len(LINEAR)))
    faint = frames_of(500.0 * plane_wave(LINEAR, math.radians(50.0), n=n, seed=250) + noise)
    results = {}
    for accumulate_s in (0.0, 0.3):
        got: list[VoiceDirection] = []
        run(DirectionEstimator(LINEAR, got.append, onset_db=0, accumulate_s=accumulate_s), faint)
        errors = [abs(math.degrees(d.azimuth) - 50.0) for d in got]
        results[accumulate_s] = (len(got), float(np.median(errors)))
    (alone, alone_error), (summed, summed_error) = results[0.0], results[0.3]
    assert alone < len(faint) - 3 - 5  # windows alone: several under min_confidence
    assert summed >= alone + 5
    assert summed_error < alone_error


@pytest.mark.parametrize("pause_s", [0.0, 0.8])
def test_a_new_talker_is_followed_at_once_after_a_pause_or_none(pause_s: float) -> None:
    """The sum forgets a talker within its time constant, and starts over at once when a sure
    window comes from elsewhere: someone taking over without a pause is not heard where the
    last one was."""
    got: list[VoiceDirection] = []
    estimator = DirectionEstimator(LINEAR, got.append, onset_db=0)
    k = run(estimator, voice(-40.0))
    for frame in silence(pause_s):
        estimator.frame(frame, k * FRAME_S, speech=False)
        k += 1
    start = k * FRAME_S
    run(estimator, voice(50.0), start=k)
    whole = start + (estimator.window_frames - 1) * FRAME_S  # the first window all of them
    second = [math.degrees(d.azimuth) for d in got if d.t >= whole - 1e-9]
    assert len(second) == len(voice(50.0)) - estimator.window_frames + 1
    assert all(abs(deg - 50.0) < 2.0 for deg in second), second[:8]


def test_the_sums_time_constant_is_checked() -> None:
    with pytest.raises(ValueError, match="accumulate_s must be 0-10 s"):
        DirectionEstimator(LINEAR, accumulate_s=-1.0)


def test_only_a_rising_sound_is_handed_on_by_default() -> None:
    # the precedence effect: a steady sound's later windows hold its room's reflections too;
    # only windows whose last frame is ONSET_DB over the quietest of the frames before count
    got: list[VoiceDirection] = []
    estimator = DirectionEstimator(LINEAR, got.append)
    assert estimator.onset_db == ONSET_DB > 0
    quiet, loud = silence(0.5), voice(35.0)
    for k, frame in enumerate(quiet + loud + quiet + loud):
        estimator.frame(frame, k * FRAME_S, speech=True)
    heard = [round(d.t / FRAME_S) for d in got]
    first, second = len(quiet), 2 * len(quiet) + len(loud)
    # each burst's first frames are a rise over the quiet before them; its steady rest is not
    assert heard
    assert set(heard) <= {
        *range(first, first + ONSET_FRAMES),
        *range(second, second + ONSET_FRAMES),
    }
    assert first in heard
    assert second in heard
    assert all(abs(math.degrees(d.azimuth) - 35.0) < 1.5 for d in got)
    with pytest.raises(ValueError, match="onset_db"):
        DirectionEstimator(LINEAR, onset_db=-1)


def test_nothing_is_handed_on_when_the_vad_says_no_speech() -> None:
    got: list[VoiceDirection] = []
    estimator = DirectionEstimator(LINEAR, got.append, onset_db=0)
    for k, frame in enumerate(voice(-20.0)):
        assert estimator.frame(frame, k * FRAME_S, speech=False) is None
    assert got == []
    assert estimator.handed_on == 0


def test_without_a_vad_result_an_energy_gate_decides() -> None:
    got: list[VoiceDirection] = []
    estimator = DirectionEstimator(LINEAR, got.append, onset_db=0)
    quiet, loud = silence(1.0), voice(-50.0)
    for k, frame in enumerate(quiet + loud + quiet):
        estimator.frame(frame, k * FRAME_S)
    assert got, "the loud second was not heard"
    heard = [round(d.t / FRAME_S) for d in got]
    assert min(heard) >= len(quiet)
    assert max(heard) < len(quiet) + len(loud) + 4
    assert abs(np.median([math.degrees(d.azimuth) for d in got]) + 50.0) < 1.5


def test_the_robots_own_voice_is_never_a_target_until_after_its_room_is_quiet() -> None:
    got: list[VoiceDirection] = []
    estimator = DirectionEstimator(LINEAR, got.append, onset_db=0)
    speech = voice(10.0, seconds=2.0)
    for k, frame in enumerate(speech):
        estimator.frame(frame, k * FRAME_S, speech=True, robot_speaking=k < 30)
    own = [d for d in got if d.own_voice]
    assert own
    assert all(d.t < 29 * FRAME_S + OWN_HOLD_S for d in own)
    assert all(d.t >= 29 * FRAME_S + OWN_HOLD_S for d in got if not d.own_voice)
    assert estimator.targets == len(got) - len(own) > 0


def test_a_barge_in_makes_the_voice_a_target_while_the_robot_still_plays() -> None:
    got: list[VoiceDirection] = []
    estimator = DirectionEstimator(LINEAR, got.append, onset_db=0)
    frames = voice(-30.0, seconds=1.0)
    for k, frame in enumerate(frames):
        if k == 15:
            estimator.barge_in()
        estimator.frame(frame, k * FRAME_S, speech=True, robot_speaking=True)
    first = estimator.window_frames - 1
    assert [d.own_voice for d in got] == [k < 15 for k in range(first, len(frames))]


def test_the_playback_reference_says_when_the_robot_plays() -> None:
    clock = FakeClock()
    reference = PlaybackReference(NullSink(clock))
    reference.start(16000)
    estimator = DirectionEstimator(LINEAR, reference=reference.reader(), onset_db=0)
    reference.write(np.full(16000, 2000, np.int16))  # a second of the robot's voice
    frames = voice(50.0, seconds=2.0)
    start, out = clock.now(), []
    for frame in frames:
        clock.advance(FRAME_S)
        out.append(estimator.frame(frame, clock.now() - start, speech=True))
    handed = [d for d in out if d is not None]
    assert all(d.own_voice for d in handed if d.t <= 1.0)
    assert all(not d.own_voice for d in handed if d.t > 1.0 + OWN_HOLD_S + FRAME_S)
    assert estimator.targets > 0


def test_a_frame_of_the_wrong_shape_is_refused() -> None:
    estimator = DirectionEstimator(LINEAR)
    with pytest.raises(ValueError, match="512 × 4"):
        estimator.frame(np.zeros((512, 2), np.int16), 0.0)


def test_the_sink_runs_the_estimator_on_its_own_thread() -> None:
    done = threading.Event()
    got: list[VoiceDirection] = []
    quiet = frames_of(3.0 * np.random.default_rng(6).standard_normal((8 * FRAME_SAMPLES, 4)))
    loud = frames_of(3000 * plane_wave(SQUARE, math.radians(-120), n=16 * FRAME_SAMPLES))

    def hand_on(d: VoiceDirection) -> None:
        got.append(d)
        if round(d.t / FRAME_S) == len(quiet) + len(loud) - 1:
            done.set()

    estimator = DirectionEstimator(SQUARE, hand_on, onset_db=0)  # its own energy gate
    ticks = iter(range(10_000))
    sink = DirectionSink(estimator, lambda: next(ticks) * FRAME_S, max_frames=64)
    sink.start()
    try:
        for frame in quiet + loud:
            sink.frame(frame)
        assert done.wait(10.0)
    finally:
        sink.stop()
    assert len(got) >= len(loud) - 3
    assert all(round(d.t / FRAME_S) >= len(quiet) for d in got)
    assert all(abs(math.degrees(d.azimuth) + 120) < 1.5 for d in got)
    assert sink.dropped == 0


class _Frames:
    def __init__(self) -> None:
        self.frames: list[Frame] = []
        self.ended: list[str] = []
        self.done = threading.Event()

    def frame(self, samples: Frame) -> None:
        self.frames.append(np.array(samples))

    def end(self, reason: str) -> None:
        self.ended.append(reason)
        self.done.set()


def _write(path: Path, signal: NDArray[np.int16], rate: int) -> None:
    with wave.open(str(path), "wb") as wav:
        wav.setnchannels(signal.shape[1])
        wav.setsampwidth(2)
        wav.setframerate(rate)
        wav.writeframes(signal.astype("<i2").tobytes())


@pytest.mark.parametrize("rate", [16000, 48000])
def test_a_multichannel_wav_feeds_the_mono_listener_and_the_array(
    tmp_path: Path, rate: int
) -> None:
    n = rate  # one second
    wave_ = plane_wave(LINEAR, math.radians(-40), n=n, rate=rate, seed=3)
    signal = np.round(3000 * wave_).astype(np.int16)
    _write(tmp_path / "array.wav", signal, rate)
    mono, multi = _Frames(), _Frames()
    source = WavSource(tmp_path / "array.wav", multi=multi)
    source.start(mono)
    try:
        assert mono.done.wait(10.0)
    finally:
        source.stop()
    assert len(multi.frames) == len(mono.frames) == math.ceil(16000 / FRAME_SAMPLES)
    assert multi.ended == mono.ended == ["eof"]
    assert all(f.shape == (FRAME_SAMPLES, 4) for f in multi.frames)
    for m, a in zip(mono.frames, multi.frames, strict=True):  # the mono frame is the mean
        assert np.max(np.abs(m.astype(float) - a.mean(axis=1))) <= 2
    if rate == 16000:
        assert np.array_equal(np.concatenate(multi.frames)[:n], signal)
    estimator = DirectionEstimator(LINEAR, onset_db=0)  # a steady sound: every window
    estimates = [estimator.frame(f, k * FRAME_S, speech=True) for k, f in enumerate(multi.frames)]
    found = [math.degrees(d.azimuth) for d in estimates[3:-1] if d is not None]
    assert abs(float(np.median(found)) + 40.0) < 2.0


def test_an_array_of_samples_by_channels_feeds_both_too() -> None:
    signal = np.arange(4 * 1024, dtype=np.int16).reshape(1024, 4)
    mono, multi = _Frames(), _Frames()
    source = WavSource(signal, sample_rate=16000, multi=multi)
    source.start(mono)
    try:
        assert mono.done.wait(10.0)
    finally:
        source.stop()
    assert np.array_equal(np.concatenate(multi.frames), signal)
    assert np.array_equal(np.concatenate(mono.frames), signal.mean(axis=1).astype(np.int16))


def test_listen_mics_is_checked() -> None:
    assert ListenConfig().mics == ()
    assert ListenConfig(mics=tuple(LINEAR)).mics == tuple(LINEAR)
    for bad, says in (
        (((0.0, 0.0, 0.0),), "2-32 microphones"),
        (((0.0, 0.0, 0.0), (0.0, 0.0, 0.0)), "same place"),
        (((0.0, 0.0, 0.0), (1.5, 0.0, 0.0)), "within ±1 m"),
        (((0.0, 0.0, 0.0), (math.nan, 0.0, 0.0)), "within ±1 m"),
    ):
        with pytest.raises(ConfigError, match=says):
            ListenConfig(mics=bad)
    assert ListenConfig().mics_mount == "fixed"
    assert ListenConfig(mics=tuple(LINEAR), mics_mount="head").mics_mount == "head"
    with pytest.raises(ConfigError, match=r"listen\.mics_mount must be one of head, fixed"):
        ListenConfig(mics_mount="hat")


def test_a_microphone_array_of_an_absurd_size_is_refused_before_any_device() -> None:
    from anima.listening.sources import MicrophoneSource

    for channels in (0, 33):
        with pytest.raises(ConfigError, match="channels must be 1-32"):
            MicrophoneSource(channels=channels)
    assert MicrophoneSource(channels=4, multi=_Frames()).channels == 4  # touches nothing yet
