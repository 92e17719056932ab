"""Voice streams (a realtime model's voice) through the speech service, on a stepped fake clock.

The motion engine is ticked by hand at 100 Hz on a :class:`FakeClock`; the null sink plays on
that clock, so "0.37 s of the stream has played" is exact. The service's worker and player run
on their own threads and wait on the same clock: before each tick the rig waits until they are
idle (:meth:`Rig.settle`), so what was fed is in the sink before time moves.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator

import numpy as np
import pytest

from anima import commands as cmd
from anima import estop
from anima.animation.library import AnimationLibrary, shipped_folder
from anima.behaviour.controller import Behaviour
from anima.behaviour.speech_gestures import BehaviourGestures
from anima.body import Role, load_body
from anima.commands import OpenVoiceStream
from anima.config import AnimaConfig, MqttConfig
from anima.drivers.sim import SimDriver
from anima.errors import EStopActiveError, InvalidCommandError
from anima.events import Event, EventHub, MoveStarted, Notice, SpeechEnded, SpeechStarted
from anima.language.text import MAX_SPEECH_TEXT
from anima.runtime import Runtime
from anima.speech.player import ANTENNAS, LIPS, SWAY
from anima.speech.service import SpeechService
from anima.speech.sinks import NullSink
from anima.speech.stream import BURST_S, JITTER_S, MAX_AHEAD_S, STREAM_RATE, Stream
from anima.speech.visemes import LIPS as SHAPES
from anima.testing import EventRecorder, FakeClock, eventually
from anima.testing.harness import make_engine
from anima.testing.tts import ScriptedEngine

pytestmark = pytest.mark.fast

PERIOD = 0.01
IN_RATE = 24000  # OpenAI Realtime's PCM16


def tone(seconds: float, rate: int = IN_RATE, amplitude: float = 8000.0) -> bytes:
    """A voiced sound (200 Hz, ~-15 dBFS), as a realtime model's PCM16 delta."""
    t = np.arange(round(seconds * rate)) / rate
    return (amplitude * np.sin(2 * np.pi * 200.0 * t)).astype("<i2").tobytes()


def silence(seconds: float, rate: int = IN_RATE) -> bytes:
    return bytes(2 * round(seconds * rate))


class Rig:
    def __init__(
        self,
        *,
        gestures: bool = False,
        body: str | None = None,
        sink: Callable[[FakeClock], NullSink] = NullSink,
    ) -> None:
        self.hub = EventHub()
        self.recorder = EventRecorder().attach(self.hub)
        self.engine, self.driver, self.clock = make_engine(
            body=load_body(body) if body else None, events=self.hub
        )
        self.sink = sink(self.clock)
        self.behaviour: Behaviour | None = None
        said = None
        if gestures:
            library = AnimationLibrary([shipped_folder()], len(self.engine.body))
            library.load()
            self.behaviour = Behaviour(self.engine, library, self.hub, self.clock)
            said = BehaviourGestures(self.behaviour, self.hub)
        self.speech = SpeechService(
            [ScriptedEngine()], self.sink, self.engine, self.hub, self.clock,
            gestures=said, gesture_mode="disabled",
        )  # fmt: skip
        self.lip = self.engine.body.role_index(Role.LIPS_OPEN) or 0
        self.rest = self.engine.body.channels[self.lip].default
        self.t = self.clock.now()
        self.hub.start()
        self.speech.start()

    def open(self) -> Stream:
        stream = self.speech.open_stream(OpenVoiceStream())
        assert isinstance(stream, Stream)
        return stream

    def settle(self) -> None:
        """Wait (real time) until the speech threads have done what they can before time
        moves: what was fed is written, what is due has run."""
        assert eventually(
            lambda: not self.speech.synthesizing and self.clock.quiet(), timeout=10, every=0.0002
        )

    def tick(self, n: int = 1) -> None:
        for _ in range(n):
            self.settle()
            self.t = round(self.t + PERIOD, 6)
            self.clock.advance(self.t - self.clock.now())
            self.engine.tick(self.t)

    def mouth(self) -> float:
        """The lip channel's opening above rest, as last sent."""
        return float(self.engine.last_frame[self.lip] - self.rest)

    def events(self, kind: type[Event] | None = None) -> list[Event]:
        assert self.hub.flush(5.0)  # delivered in order by the hub's own thread
        return [e for e in self.recorder.events if kind is None or isinstance(e, kind)]

    def ends(self) -> list[SpeechEnded]:
        self.settle()  # an end the last tick made due is published
        return [e for e in self.events(SpeechEnded) if isinstance(e, SpeechEnded)]

    def close(self) -> None:
        self.speech.stop()
        self.hub.stop()


@pytest.fixture
def rig() -> Iterator[Rig]:
    r = Rig()
    yield r
    r.close()


def ms_of_sink(rig: Rig) -> int:
    return rig.sink.played() * 1000 // STREAM_RATE


def test_a_stream_is_one_utterance_between_two_others_paired_and_in_order(rig: Rig) -> None:
    first = rig.speech.speak("one two")
    stream = rig.open()
    stream.words("Hello from the model.")
    stream.feed(tone(0.3), IN_RATE)
    stream.finish()
    last = rig.speech.speak("three")
    for _ in range(400):
        rig.tick()
        if len(rig.ends()) == 3:
            break
    events = [e for e in rig.events() if isinstance(e, SpeechStarted | SpeechEnded)]
    assert [(type(e).__name__, e.utterance) for e in events] == [
        ("SpeechStarted", first), ("SpeechEnded", first),
        ("SpeechStarted", stream.utterance), ("SpeechEnded", stream.utterance),
        ("SpeechStarted", last), ("SpeechEnded", last),
    ]  # fmt: skip
    assert [e.reason for e in rig.ends()] == ["done", "done", "done"]
    start, end = events[2], events[3]
    assert isinstance(start, SpeechStarted)
    assert start.text == "Hello from the model."
    assert end.t - start.t == pytest.approx(0.3, abs=0.011)  # its audio, to the tick
    assert stream.done
    assert stream.played_ms() == 300


def test_played_ms_follows_the_sink_exactly_and_stop_returns_it(rig: Rig) -> None:
    stream = rig.open()
    stream.feed(tone(1.0), IN_RATE)
    rig.settle()
    assert stream.played_ms() == 0  # written, nothing played yet
    t0 = rig.clock.now()  # the first sample went to the sink now (a fed second: no jitter wait)
    for ticks in (7, 13, 10):
        rig.tick(ticks)
        elapsed_ms = (rig.clock.now() - t0) * 1000
        assert stream.played_ms() == ms_of_sink(rig)
        assert 0 <= elapsed_ms - stream.played_ms() < 1.05  # floored: never more than played
    rig.settle()
    rig.clock.advance(0.0071)  # between ticks: the sink's clock, not the tick's
    expected = ms_of_sink(rig)
    assert abs(expected - 307.1) <= 1
    assert stream.stop() == expected
    assert rig.sink.played() * 1000 // STREAM_RATE == expected  # frozen at the stop
    rig.tick(20)
    assert stream.played_ms() == expected
    assert [(e.utterance, e.reason) for e in rig.ends()] == [(stream.utterance, "interrupted")]
    stream.feed(tone(0.2), IN_RATE)  # after the stop: ignored
    assert stream.stop("stopped") == expected  # again: the same, no second end
    rig.tick(5)
    assert len(rig.ends()) == 1


def test_an_underrun_is_silence_not_the_end_and_the_lips_close_in_it(rig: Rig) -> None:
    stream = rig.open()
    stream.feed(tone(0.2), IN_RATE)
    rig.tick(12)
    assert rig.mouth() > 5.0, "the lips do not move while voiced audio plays"
    rig.tick(30)  # 0.2 s of audio, then 0.22 s of nothing from the model
    assert rig.ends() == []
    assert not stream.done
    # all it has: the resampler keeps its last 16 input samples (0.7 ms) for what comes next
    assert stream.played_ms() == ms_of_sink(rig) == 199
    assert abs(rig.mouth()) < 0.5, "the mouth stays open in an underrun"
    stream.feed(tone(0.2), IN_RATE)
    stream.finish()
    rig.tick(10)
    assert rig.mouth() > 5.0
    for _ in range(30):
        rig.tick()
        if rig.ends():
            break
    assert [e.reason for e in rig.ends()] == ["done"]
    assert stream.played_ms() == 400  # only audio counts: the gap is not played


def test_audio_lips_open_with_the_voice_and_close_in_its_pauses(rig: Rig) -> None:
    stream = rig.open()
    stream.feed(tone(0.3) + silence(0.3) + tone(0.3), IN_RATE)
    stream.finish()
    mouth, sway = [], []
    for _ in range(95):
        rig.tick()
        state = rig.engine.state()
        mouth.append((ms_of_sink(rig), rig.mouth(), LIPS in state.overrides))
        if 100 <= ms_of_sink(rig) <= 250 and SWAY in state.offsets:
            sway.append(ms_of_sink(rig))
    voiced = [m for ms, m, _ in mouth if 60 <= ms <= 260 or 660 <= ms <= 860]
    quiet = [m for ms, m, _ in mouth if 360 <= ms <= 560]
    assert min(voiced) > 5.0
    assert sway, "no speech sway while the stream's voice played"
    assert max(abs(m) for m in quiet) < 0.5
    # the mouth opens at the voice's onset within a tick or two (lips vs audio)
    onset = next(ms for ms, m, _ in mouth if ms >= 600 and m > 2.0)
    assert 590 <= onset <= 620
    assert not mouth[-1][2], "the lips override outlives the stream"


def test_viseme_marks_drive_the_lips_at_their_times(rig: Rig) -> None:
    stream = rig.open()
    stream.visemes([(0, "sil"), (200, "aa"), (400, "PP"), (450, "no-such-class")])
    stream.feed(silence(0.6), IN_RATE)  # silent audio: only the marks can open the mouth
    stream.finish()
    seen: dict[int, float] = {}  # ms played (to the tick) → the mouth
    for k in range(1, 61):
        rig.tick()
        seen[10 * k] = rig.mouth()
    span = rig.engine.body.channels[rig.lip].max - rig.rest
    assert abs(seen[150]) < 0.5
    assert seen[300] == pytest.approx(SHAPES["aa"][0] * span, abs=0.5)
    assert abs(seen[420]) < 0.5  # PP: lips pressed
    assert seen[550] == pytest.approx(SHAPES["E"][0] * span, abs=0.5)  # unknown: neutral open


@pytest.mark.parametrize("rate", [16000, 24000, 44100, 48000])
def test_resampling_to_the_sinks_rate_keeps_the_duration(rig: Rig, rate: int) -> None:
    stream = rig.open()
    audio = tone(1.0, rate)
    piece = 2 * rate // 20  # 50 ms deltas
    for i in range(0, len(audio), piece):
        stream.feed(audio[i : i + piece], rate)
    stream.finish()
    for _ in range(120):
        rig.tick()
        if rig.ends():
            break
    assert [e.reason for e in rig.ends()] == ["done"]
    assert rig.sink.written() == STREAM_RATE  # one second, to the sample
    assert stream.played_ms() == 1000


def test_the_jitter_buffer_plays_audio_its_time_after_it_came_or_a_burst_at_once(
    rig: Rig,
) -> None:
    stream = rig.open()
    stream.feed(tone(0.05), IN_RATE)  # 50 ms: were it played now, a late next delta is a gap
    rig.tick(3)
    assert rig.sink.written() == 0  # held back
    rig.tick(1)  # JITTER_S after it came
    rig.settle()
    assert JITTER_S == 0.04
    assert rig.sink.written() > 0
    t_first = rig.clock.now()
    rig.tick(4)
    # 80 ms after the first: played at once, it would have come 30 ms after that one ended
    stream.feed(tone(0.05), IN_RATE)
    rig.tick(2)
    assert 0 < rig.sink.played() < rig.sink.written()  # no underrun
    rig.tick(40)  # the model stalls: an underrun, then a burst that plays at once
    assert rig.sink.played() == rig.sink.written()
    stream.feed(tone(BURST_S), IN_RATE)
    rig.settle()
    assert rig.sink.played() < rig.sink.written()
    stream.finish()
    # the burst (160 ms) plays out: done within 20 ticks on a quiet machine; under load the
    # worker's last write can land a tick or two late (autojump sees only threads that wait on
    # the clock), so up to 1 s of robot time, and the end must be a plain "done"
    for _ in range(100):
        rig.tick(1)
        if rig.ends():
            break
    assert [e.reason for e in rig.ends()] == ["done"]
    assert t_first == pytest.approx(1000.04)


def test_an_estop_ends_a_stream_and_refuses_a_new_one(rig: Rig) -> None:
    stream = rig.open()
    stream.feed(tone(1.0), IN_RATE)
    rig.tick(25)
    estop.engage(rig.engine, rig.speech, rig.hub)
    assert [(e.utterance, e.reason) for e in rig.ends()] == [(stream.utterance, "estop")]
    played = stream.played_ms()
    assert abs(played - 250) <= 1
    written = rig.sink.written()
    stream.feed(tone(0.5), IN_RATE)  # ignored: no error, nothing written
    stream.finish()
    rig.tick(5)
    assert rig.sink.written() == written
    assert stream.played_ms() == played
    with pytest.raises(EStopActiveError, match="voice stream refused: emergency stop"):
        rig.open()
    estop.release(rig.engine, rig.hub)
    rig.open().stop()


def test_stopping_a_queued_stream_pairs_its_events_and_the_others_play_on(rig: Rig) -> None:
    before = rig.speech.speak("one two")
    stream = rig.open()
    after = rig.speech.speak("three")
    rig.tick(3)
    assert stream.stop() == 0  # it never sounded
    for _ in range(300):
        rig.tick()
        if len(rig.ends()) == 3:
            break
    ends = {e.utterance: e.reason for e in rig.ends()}
    assert ends == {before: "done", stream.utterance: "interrupted", after: "done"}
    starts = [e.utterance for e in rig.events(SpeechStarted) if isinstance(e, SpeechStarted)]
    assert starts == [before, stream.utterance, after]


def test_a_huge_feed_is_refused_at_once_and_the_stream_plays_on(rig: Rig) -> None:
    stream = rig.open()
    huge = bytes(10 * 1024 * 1024)  # 218 s of 24 kHz audio in one delta
    t = time.perf_counter()
    with pytest.raises(InvalidCommandError, match=r"218\.5 s of audio in one feed"):
        stream.feed(huge, IN_RATE)
    assert time.perf_counter() - t < 0.1
    with pytest.raises(InvalidCommandError, match="whole 16-bit samples"):
        stream.feed(b"\x00\x01\x02", IN_RATE)
    with pytest.raises(InvalidCommandError, match="sample rate 1 Hz"):
        stream.feed(b"\x00\x01", 1)
    # accepted, at the sink's rate (not resampled: the test's time), written a piece at a time
    stream.feed(silence(MAX_AHEAD_S - 1, STREAM_RATE), STREAM_RATE)
    with pytest.raises(InvalidCommandError, match=f"at most {MAX_AHEAD_S:g} s may wait"):
        stream.feed(tone(2.0), IN_RATE)
    rig.tick(10)
    assert stream.played_ms() == 100
    assert stream.stop() == 100
    rig.tick(2)
    assert rig.ends()[0].reason == "interrupted"


def test_a_stream_never_finished_ends_after_its_idle_bound(rig: Rig) -> None:
    stream = rig.open()
    stream.feed(tone(0.1), IN_RATE)
    for _ in range(12):
        rig.settle()
        rig.t += 1.0
        rig.clock.advance(1.0)
    rig.settle()
    assert [e.reason for e in rig.ends()] == ["error"]
    notices = [e.message for e in rig.events(Notice) if isinstance(e, Notice)]
    assert any("no audio for 10 s and no finish()" in m for m in notices)
    assert stream.played_ms() == 99  # never finished: the resampler's last 0.7 ms never came


def test_markers_in_the_transcript_start_gestures_where_the_audio_was() -> None:
    rig = Rig(gestures=True)
    try:
        stream = rig.open()
        stream.words("Hello")  # before the first sample: start_speak shows it
        stream.feed(tone(0.3), IN_RATE)
        rig.settle()  # playing: the words from here on come after its start
        stream.words(" ^sta")  # a marker cut by the delta's end
        stream.words("rt(nod) there ^start(moonwalk) ")
        stream.feed(tone(0.3), IN_RATE)
        stream.finish()
        moved_at = None
        for _ in range(70):
            rig.tick()
            if moved_at is None and rig.events(MoveStarted):
                moved_at = rig.sink.played()
        assert moved_at is not None, "^start(nod) never started"
        at = round(0.3 * STREAM_RATE)
        assert at <= moved_at <= at + PERIOD * STREAM_RATE  # the tick that reached it
        start = rig.events(SpeechStarted)[0]
        assert isinstance(start, SpeechStarted)
        assert start.text == "Hello"
        assert stream._u.text == "Hello there"  # the words so far, markers out
        notices = [e.message for e in rig.events(Notice) if isinstance(e, Notice)]
        assert any("^start(moonwalk) ignored" in m for m in notices)
    finally:
        rig.close()


def test_the_runtime_opens_a_stream_and_its_estop_refuses_one() -> None:
    with FakeClock(autojump=True) as clock:
        rt = Runtime(
            AnimaConfig(mqtt=MqttConfig(enabled=False)), driver=SimDriver(), clock=clock,
            audio_sink=NullSink(clock), tts=[ScriptedEngine()],
        )  # fmt: skip
        recorder = EventRecorder().attach(rt.events)
        rt.start()
        try:
            opened = rt.execute(cmd.OpenVoiceStream(locale="en-US", source="test"))
            assert isinstance(opened, cmd.VoiceStreamOpened)
            opened.stream.feed(tone(0.5), IN_RATE)
            opened.stream.finish()
            end = recorder.wait_for(SpeechEnded, 10.0)
            assert isinstance(end, SpeechEnded)
            assert (end.utterance, end.reason) == (opened.stream.utterance, "done")
            assert opened.stream.played_ms() == 500
            rt.execute(cmd.EmergencyStop())
            with pytest.raises(EStopActiveError):
                rt.execute(cmd.OpenVoiceStream())
        finally:
            rt.stop(ease=False)


def test_a_flood_of_markers_plays_at_most_32_and_bounds_the_words() -> None:
    rig = Rig(gestures=True)
    try:
        stream = rig.open()
        stream.words("go ^start(nod) " * 40 + "x" * 5000)
        assert len(stream.playback.cues) == 32
        text = stream._u.text  # start_speak's, bounded as any text to say
        assert 1900 < len(text) <= MAX_SPEECH_TEXT
        assert text.endswith("xxx")
        stream.stop()
    finally:
        rig.close()


def test_a_body_without_lips_lifts_its_antennas_with_the_streamed_voice() -> None:
    rig = Rig(body="reachy_mini")
    try:
        body = rig.engine.body
        assert body.role_index(Role.LIPS_OPEN) is None
        right = body.role_index(Role.ANTENNA_RIGHT)
        assert right is not None
        rest = body.channels[right].default
        stream = rig.open()
        stream.feed(tone(0.3) + silence(0.3), IN_RATE)
        stream.finish()
        rig.tick(15)
        assert ANTENNAS in rig.engine.state().overrides
        assert rig.engine.last_frame[right] < rest - 5.0  # the right one down, by the opening
        rig.tick(30)
        assert abs(rig.engine.last_frame[right] - rest) < 0.5  # at rest in the pause
    finally:
        rig.close()
