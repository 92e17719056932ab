"""Issue 14: the playback reference, the echo canceller, the residual guard, the barge-in round."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

from anima.audio import FRAME_SAMPLES, SAMPLE_RATE
from anima.config.listening import ListenConfig
from anima.errors import ConfigError
from anima.listening.echo.canceller import NoEcho, ResidualGuard, WebRtcEcho, erle_db, make_echo
from anima.listening.outcomes import Final, RecordingStarted, Woke
from anima.listening.recorder import Recorder
from anima.listening.speech_detector import SpeechDetector
from anima.listening.vad import EnergyVad
from anima.speech.reference import PlaybackReference
from anima.speech.sinks import NullSink
from anima.testing import FakeClock
from anima.testing.listening import FakeRecognizer
from anima.testing.room import EchoPath, StreamingEcho, to_int16

pytestmark = pytest.mark.fast

needs_livekit = pytest.mark.skipif(
    importlib.util.find_spec("livekit") is None, reason="the duplex extra (livekit) is missing"
)


def voice_like(seconds: float, seed: int = 0) -> np.ndarray:
    """Speech-shaped test audio: noise in syllable bursts (4 Hz), a voice's loudness."""
    rng = np.random.default_rng(seed)
    n = int(seconds * SAMPLE_RATE)
    t = np.arange(n) / SAMPLE_RATE
    envelope = 0.55 + 0.45 * np.sin(2 * np.pi * 4 * t)
    return to_int16(np.convolve(rng.standard_normal(n), np.ones(4) / 4, "same") * envelope * 5000)


def test_the_reference_holds_what_was_played_and_never_what_a_stop_dropped() -> None:
    clock = FakeClock()
    reference = PlaybackReference(NullSink(clock))
    reader = reference.reader()
    reference.start(22050)
    reference.write(np.full(22050, 1000, np.int16))  # one second queued
    assert len(reader.take()) == 0  # nothing played yet
    clock.advance(0.5)
    half = reader.take()
    assert abs(len(half) - 8000) <= 20  # half a second, at 16 kHz
    assert abs(int(np.median(half)) - 1000) <= 5
    reference.stop()  # the rest is dropped, as the sink drops it
    clock.advance(0.5)
    assert len(reader.take()) <= 20  # the resampler's last few samples at most
    late = reference.reader()  # a new reader starts now
    assert len(late.take()) == 0


def test_an_unknown_canceller_is_refused_and_none_passes_the_audio() -> None:
    with pytest.raises(ConfigError, match=r"listen\.echo"):
        make_echo("speex")
    with pytest.raises(ConfigError, match=r"listen\.echo"):
        ListenConfig(echo="speex")
    frame = voice_like(FRAME_SAMPLES / SAMPLE_RATE)
    assert NoEcho().process(frame, frame) is frame


@needs_livekit
def test_webrtc_takes_the_robot_out_and_keeps_the_person() -> None:
    robot = voice_like(6.0, seed=1)
    person = voice_like(1.0, seed=2)
    path = EchoPath(delay_s=0.04, gain_db=-3.0, rt60_s=0.4)
    echo = path.apply(robot)
    at = 4 * SAMPLE_RATE
    mic = echo.copy()
    mic[at : at + len(person)] += person
    canceller = WebRtcEcho()
    guard = ResidualGuard()
    out = []
    for i in range(0, len(robot) - FRAME_SAMPLES + 1, FRAME_SAMPLES):
        m, r = to_int16(mic[i : i + FRAME_SAMPLES]), robot[i : i + FRAME_SAMPLES]
        out.append(guard.check(m, canceller.process(m, r), r))
    cleaned = np.concatenate(out).astype(np.float64)
    lag = 160  # the canceller's one block
    alone = slice(2 * SAMPLE_RATE, at - 1000)
    assert erle_db(echo[alone], cleaned[alone.start + lag : alone.stop + lag]) > 20
    talk = slice(at + 1600, at + len(person) - 1600)
    lost_db = erle_db(person[talk], cleaned[talk.start + lag : talk.stop + lag])
    assert lost_db < 6  # the person comes through within 6 dB, though the robot talks on


def test_the_guard_damps_only_what_the_reference_explains() -> None:
    guard = ResidualGuard()
    reference = voice_like(3.0, seed=3)
    quiet = (reference * 0.01).astype(np.int16)  # what a canceller leaves of the echo
    for i in range(0, 2 * SAMPLE_RATE, FRAME_SAMPLES):
        r = reference[i : i + FRAME_SAMPLES]
        guard.check(r, quiet[i : i + FRAME_SAMPLES], r)
    assert guard.explained > 40
    i = 2 * SAMPLE_RATE
    r = reference[i : i + FRAME_SAMPLES]
    voice = voice_like(FRAME_SAMPLES / SAMPLE_RATE, seed=4)
    assert guard.check(r, voice, r) is voice  # far above the residual: a person
    silent = np.zeros(FRAME_SAMPLES, np.int16)
    assert guard.check(voice, voice, silent) is voice  # the robot silent: nothing explained


def test_the_streaming_echo_is_the_whole_signals_echo() -> None:
    played = voice_like(1.0, seed=5)
    path = EchoPath()
    whole = path.apply(played)
    stream = StreamingEcho(path)
    frames = [stream.push(played[i : i + 512].astype(np.float64)) for i in range(0, 16000, 512)]
    parts = np.concatenate(frames)[: len(whole)]
    assert np.allclose(parts, whole[: len(parts)], atol=1.0)


def test_a_voice_over_the_robot_is_a_barge_in_heard_from_its_onset() -> None:
    cfg = ListenConfig(duplex=True, wake_word=False, pre_buffer_s=0.3)
    detector = SpeechDetector(EnergyVad(), start_frames=2, end_s=0.8)
    recorder = Recorder(cfg, FakeRecognizer(["wait"]), detector)
    silence = np.zeros(FRAME_SAMPLES, np.int16) + 3
    voice = voice_like(0.6, seed=6)
    outcomes = []
    for _ in range(20):
        outcomes += recorder.feed(silence)
    assert outcomes == []  # the robot not speaking: a voice would need the wake word
    recorder.speaking(True)
    for _ in range(10):
        assert recorder.feed(silence) == []
    onset = recorder.position
    for i in range(0, len(voice) - FRAME_SAMPLES + 1, FRAME_SAMPLES):
        outcomes += recorder.feed(voice[i : i + FRAME_SAMPLES])
        if outcomes:
            break
    woke = [o for o in outcomes if isinstance(o, Woke)]
    assert [w.source for w in woke] == ["barge_in"]
    assert any(isinstance(o, RecordingStarted) for o in outcomes)
    assert recorder.recording
    assert recorder.position - onset <= 3 * FRAME_SAMPLES  # heard within three frames
    # the round records from pre_buffer_s before the voice: its first word is whole
    assert recorder._active is not None
    assert recorder._active.start_position <= onset - int(0.25 * SAMPLE_RATE)


def test_no_barge_in_without_the_robot_speaking_or_after_it_stopped() -> None:
    cfg = ListenConfig(duplex=True, wake_word=False)
    recorder = Recorder(cfg, FakeRecognizer(["wait"]), SpeechDetector(EnergyVad()))
    recorder.speaking(True)
    recorder.speaking(False)
    silence = np.zeros(FRAME_SAMPLES, np.int16) + 3
    voice = voice_like(0.5, seed=7)
    for _ in range(10):
        recorder.feed(silence)
    out = [o for i in range(0, 7680, 512) for o in recorder.feed(voice[i : i + 512])]
    assert out == []
    assert not recorder.recording


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("barge_in_s", 0.0, r"listen\.barge_in_s must be in \(0, 5\]"),
        ("barge_in_s", 99.0, r"listen\.barge_in_s must be in \(0, 5\]"),
        ("barge_in_s", float("nan"), r"listen\.barge_in_s"),
        ("duplex", "yes", r"listen\.duplex must be true or false"),
        ("echo", "speex", r"listen\.echo must be one of auto, webrtc, none, got 'speex'"),
    ],
)
def test_a_bad_duplex_setting_is_refused_naming_the_key(
    field: str, value: object, message: str
) -> None:
    with pytest.raises(ConfigError, match=message):
        ListenConfig(**{field: value})  # type: ignore[arg-type]


def test_a_barge_in_rounds_final_says_how_long_the_voice_was() -> None:
    cfg = ListenConfig(duplex=True, wake_word=False, endpoint_silence_s=0.3)
    recognizer = FakeRecognizer(["Mm-hmm."])
    recorder = Recorder(cfg, recognizer, SpeechDetector(EnergyVad(), start_frames=2, end_s=0.3))
    silence = np.zeros(FRAME_SAMPLES, np.int16) + 3
    voice = voice_like(0.5, seed=8)
    recorder.speaking(True)
    outcomes = [o for _ in range(10) for o in recorder.feed(silence)]
    for i in range(0, len(voice) - FRAME_SAMPLES + 1, FRAME_SAMPLES):
        outcomes += recorder.feed(voice[i : i + FRAME_SAMPLES])
    outcomes += [o for _ in range(30) for o in recorder.feed(silence)]
    assert [o.source for o in outcomes if isinstance(o, Woke)] == ["barge_in"]
    finals = [o for o in outcomes if isinstance(o, Final)]
    assert len(finals) == 1
    assert finals[0].voiced_s is not None
    assert 0.3 <= finals[0].voiced_s <= 0.55  # the 0.5 s voice, frame by frame
