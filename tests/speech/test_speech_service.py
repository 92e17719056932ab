"""The speech service on the 100 Hz engine, with the scripted engine and the null sink.

The ``rig`` runs the engine, the sink and the service on one autojump :class:`FakeClock`: an
utterance lasts its audio in fake seconds, which pass as soon as the rig's threads are idle. A
rig with ``fake_audio`` runs the engine on the real clock and has its sink play on a stepped
:class:`FakeClock`: its audio plays only when the test moves that clock (:meth:`Rig.play`), so
"0.4 s of speech has played" is exact. A rig on the real clock (``Rig(real=True)``) is for what
real time is the subject of: a synthesizer slower than real time, a stop that waits for a load.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from anima.body import load_body
from anima.clock import Clock, MonotonicClock
from anima.drivers.sim import SimDriver
from anima.errors import CommandRefusedError, EStopActiveError, InvalidCommandError
from anima.events import Event, EventHub, Notice, SpeechEnded, SpeechStarted
from anima.language.text import MAX_SPEECH_TEXT
from anima.motion.engine import MotionEngine
from anima.speech.base import AudioChunk, Cancel
from anima.speech.service import LIPS, SpeechService
from anima.speech.sinks import NullSink
from anima.testing import eventually
from anima.testing.clock import FakeClock
from anima.testing.events import EventRecorder
from anima.testing.tts import RATE, ScriptedEngine

pytestmark = pytest.mark.integration

LIP_OPEN = 4  # 0-based index of lip_open in the shipped body


def end_of(uid: str) -> Callable[[Event], bool]:
    """Matches the end_speak of utterance ``uid``."""
    return lambda e: isinstance(e, SpeechEnded) and e.utterance == uid


class Rig:
    def __init__(
        self, engine: ScriptedEngine | None = None, *, fake_audio: bool = False, real: bool = False
    ) -> None:
        # the motion engine's clock: autojump fake time, or the real one (fake_audio, real)
        self.jumping: FakeClock | None = None if fake_audio or real else FakeClock(autojump=True)
        self.clock: Clock = self.jumping or MonotonicClock(spin_s=0.0)
        # the sink's clock: the motion engine's, or one only the test moves (play())
        self.audio: FakeClock | None = FakeClock() if fake_audio else None
        self.body = load_body()
        self.driver = SimDriver(history=5000)
        self.driver.connect()
        self.hub = EventHub()
        self.recorder = EventRecorder().attach(self.hub)
        self.motion = MotionEngine(self.body, self.driver, clock=self.clock, events=self.hub)
        self.sink = NullSink(self.audio or self.clock)
        self.tts = engine or ScriptedEngine()
        self.speech = SpeechService([self.tts], self.sink, self.motion, self.hub, self.clock)

    def start(self) -> None:
        self.hub.start()
        self.motion.start()
        self.speech.start()

    def stop(self) -> None:
        self.speech.stop()
        self.motion.stop()
        self.hub.stop()
        if self.jumping is not None:
            self.jumping.close()

    @property
    def events(self) -> list[Event]:
        return self.recorder.events

    def ended(self) -> list[SpeechEnded]:
        return [e for e in self.events if isinstance(e, SpeechEnded)]

    def started(self) -> list[SpeechStarted]:
        return [e for e in self.events if isinstance(e, SpeechStarted)]

    def wait_ended(self, n: int, timeout: float = 10.0) -> bool:
        try:
            self.recorder.wait_for(SpeechEnded, timeout, count=n)
        except AssertionError:
            return False
        return True

    def play(self, seconds: float) -> None:
        """Let ``seconds`` of audio play: once the worker has made what it is making (the
        scripted voice takes no time), the sink's clock moves."""
        assert self.audio is not None, "play() needs Rig(fake_audio=True)"
        assert eventually(lambda: not self.speech.synthesizing, 10.0, every=0.001)
        self.audio.advance(seconds)

    def barrier(self) -> None:
        """Say one more utterance to its end. The worker takes it only once it has left every
        earlier one, and it ends it itself; events arrive in order: any late end_speak of an
        earlier utterance has arrived when this one's has."""
        assert self.audio is not None, "barrier() needs Rig(fake_audio=True)"
        uid = self.speech.speak("barrier")
        # its audio made (not a stopped utterance's that the worker is still leaving)
        assert eventually(
            lambda: not self.speech.synthesizing and self.sink.played() < self.sink.written(),
            10.0,
            every=0.001,
        )
        self.audio.advance(1.0)  # "barrier" lasts 0.48 s
        end = self.recorder.wait_for(end_of(uid), 10.0)
        assert isinstance(end, SpeechEnded)
        assert end.reason == "done"


@pytest.fixture
def rig() -> Iterator[Rig]:
    r = Rig()
    r.start()
    yield r
    r.stop()


@pytest.fixture
def fake_rig() -> Iterator[Rig]:
    r = Rig(fake_audio=True)
    r.start()
    yield r
    r.stop()


def test_start_speak_as_its_audio_starts_and_end_speak_after_the_last_sample(rig: Rig) -> None:
    samples, _ = rig.tts.render("hello there robot")
    assert rig.jumping is not None
    with rig.jumping.hold():  # no time passes between t0 and the start
        t0 = rig.clock.now()
        uid = rig.speech.speak("hello there robot")
        rig.recorder.wait_for(SpeechStarted, 10.0)
    assert rig.wait_ended(1)
    started, ended = rig.started(), rig.ended()
    assert [e.utterance for e in started] == [uid]
    assert started[0].t == t0  # nothing before it, an instant voice: the audio starts now
    assert ended[0].utterance == uid
    assert ended[0].reason == "done"
    audio_end = rig.sink._base_time + (len(samples) - rig.sink._base_pos) / RATE
    lateness = ended[0].t - audio_end
    # never before the audio ends; on fake time within a tick after (`anima bench speech`
    # measures how soon on the real clock)
    assert -0.001 <= lateness <= 0.01
    assert rig.sink.played() == len(samples)


def test_lips_follow_the_audio_envelope(rig: Rig) -> None:
    text = "la la la mamama tototo sisisi lalala"
    samples, _ = rig.tts.render(text)
    rig.speech.speak(text)
    assert rig.wait_ended(1)
    start = rig.sink._base_time
    frames = [f for f in rig.driver.history() if start <= f.t <= start + len(samples) / RATE]
    assert len(frames) > 50
    mouth = np.array([f.values[LIP_OPEN] for f in frames])
    positions = ((np.array([f.t for f in frames]) - start) * RATE).astype(int)
    win = int(0.02 * RATE)
    env = np.array(
        [np.sqrt(np.mean(samples[max(0, p - win) : p + win].astype(float) ** 2)) for p in positions]
    )
    m, e = mouth - mouth.mean(), env - env.mean()
    lags = range(-5, 6)  # ticks of 10 ms
    corr = [float(np.dot(np.roll(m, lag), e)) for lag in lags]
    best = list(lags)[int(np.argmax(corr))]
    assert abs(best) * 10 <= 20  # the peak lies within ±20 ms
    assert max(corr) > 0


def test_stop_silences_now_and_releases_the_lips(fake_rig: Rig) -> None:
    rig = fake_rig
    uid = rig.speech.speak("one two three four five six seven eight nine ten eleven twelve")
    rig.play(0.4)
    assert eventually(lambda: LIPS in rig.motion.state().overrides)  # from the engine's next tick
    rig.speech.stop_speaking()
    t_stop = rig.clock.now()
    frozen = rig.sink.played()
    assert abs(frozen - 0.4 * RATE) <= 1  # it stopped where it was
    rig.play(0.05)
    assert rig.sink.played() == frozen  # silent
    assert rig.wait_ended(1)
    assert rig.ended()[0].utterance == uid
    assert rig.ended()[0].reason == "stopped"
    # the engine's ticks of the 50 ms after the stop have dropped the lips and closed the mouth
    assert eventually(lambda: rig.driver.history()[-1].t >= t_stop + 0.05)
    assert LIPS not in rig.motion.state().overrides
    lo = rig.body.channel("lip_open").default
    assert rig.motion.last_frame[LIP_OPEN] == pytest.approx(lo, abs=1.0)


def test_stop_ends_queued_utterances_too(fake_rig: Rig) -> None:
    rig = fake_rig
    ids = [rig.speech.speak(f"sentence number {i} is rather long indeed") for i in range(3)]
    rig.play(0.2)
    assert rig.speech.speaking  # the first plays, two wait
    assert rig.ended() == []
    rig.speech.stop_speaking()
    assert rig.wait_ended(3)
    assert sorted(e.utterance for e in rig.ended()) == sorted(ids)
    assert {e.reason for e in rig.ended()} == {"stopped"}


def speech_events(rig: Rig) -> list[tuple[str, str]]:
    return [(e.kind, e.utterance) for e in rig.events if isinstance(e, SpeechStarted | SpeechEnded)]


def paired(ids: list[str]) -> list[tuple[str, str]]:
    return [ev for uid in ids for ev in (("start_speak", uid), ("end_speak", uid))]


def test_a_queued_utterance_starts_when_its_audio_does_after_the_previous_end(
    fake_rig: Rig,
) -> None:
    """Issue 30 item 7: a queued speak got its start_speak at once, while the previous one still
    played (start₁ start₂ end₁ end₂); now each start_speak is its own audio's, in order."""
    rig = fake_rig
    first = rig.speech.speak("a few words")  # 0.84 s
    second = rig.speech.speak("a few more")
    third = rig.speech.speak("and the last")
    rig.play(0.2)
    rig.hub.drain()
    assert speech_events(rig) == [("start_speak", first)]  # the others wait: not started
    rig.play(1.0)  # the first plays out; the second's audio starts
    rig.recorder.wait_for(lambda e: isinstance(e, SpeechStarted) and e.utterance == second, 10)
    assert speech_events(rig) == [*paired([first]), ("start_speak", second)]
    rig.speech.stop_speaking()  # the second stopped, the third dropped before it sounded
    rig.recorder.wait_for(end_of(third), 10)
    rig.hub.drain()
    assert speech_events(rig) == paired([first, second, third])
    assert [e.reason for e in rig.ended()] == ["done", "stopped", "stopped"]


def test_a_failing_engine_still_ends_the_utterance() -> None:
    rig = Rig(ScriptedEngine(fail_after=1))
    rig.start()
    try:
        uid = rig.speech.speak("this will not go well at all")
        assert rig.wait_ended(1)
        assert rig.ended()[0].utterance == uid
        assert rig.ended()[0].reason == "error"
        assert any(isinstance(e, Notice) and "failed" in e.message for e in rig.events)
        rig.speech.speak("ok")  # the service survives
        assert rig.wait_ended(2)
    finally:
        rig.stop()


def test_an_unsupported_locale_falls_back_to_english_with_a_notice(rig: Rig) -> None:
    rig.speech.speak("bonjour", "fr-FR")
    assert rig.wait_ended(1)
    assert rig.ended()[0].reason == "done"
    assert any(isinstance(e, Notice) and "fr-FR" in e.message for e in rig.events)


def test_a_slow_synthesizer_stalls_playback_and_the_end_waits_for_it() -> None:
    # 0.1 s of audio every 0.15 s of real time: real time is the subject
    rig = Rig(ScriptedEngine(chunk_s=0.1, delay_s=0.15), real=True)
    rig.start()
    try:
        samples, _ = rig.tts.render("slow speech here")
        t0 = time.monotonic()
        rig.speech.speak("slow speech here")
        assert rig.wait_ended(1, timeout=15)
        took = time.monotonic() - t0
        assert took >= len(samples) / RATE  # it never ended before the audio could have played
        assert rig.sink.played() == len(samples)
    finally:
        rig.stop()


@settings(
    max_examples=15,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(st.lists(st.sampled_from(["speak", "stop", "wait", "play"]), min_size=1, max_size=8))
def test_every_start_has_exactly_one_end(fake_rig: Rig, script: list[str]) -> None:
    rig = fake_rig
    ids: list[str] = []
    for step in script:
        if step == "speak":
            ids.append(rig.speech.speak("a few words"))
        elif step == "stop":
            rig.speech.stop_speaking()
        elif step == "wait":
            rig.play(0.03)
        else:
            rig.play(1.0)  # the current utterance plays out (0.84 s): the worker ends it
    rig.speech.stop_speaking()
    deadline = time.monotonic() + 10
    for uid in ids:  # events arrive on the hub's thread: wait until every id has ended
        rig.recorder.wait_for(end_of(uid), max(0.0, deadline - time.monotonic()))
    rig.barrier()  # a second end would have arrived before it
    started = {e.utterance for e in rig.started()}
    ends = [e.utterance for e in rig.ended()]
    for uid in ids:
        assert uid in started
        assert ends.count(uid) == 1
    # paired and in order: start₁ end₁ start₂ end₂ … (the barrier's last; the rig is shared by
    # hypothesis's examples, so this one's only)
    mine = [*ids, rig.ended()[-1].utterance]
    assert [ev for ev in speech_events(rig) if ev[1] in mine] == paired(mine)


class GatedEngine(ScriptedEngine):
    """The scripted voice, whose synthesis waits at a gate after its first chunk: a long
    synthesis call (Piper phonemizing a clause) that the test holds open as long as it likes."""

    def __init__(self) -> None:
        super().__init__(chunk_s=0.1)
        self.inside = threading.Event()
        self.gate = threading.Event()

    def synthesize(self, text: str, locale: str, cancel: Cancel) -> Iterator[AudioChunk]:
        for i, chunk in enumerate(super().synthesize(text, locale, cancel)):
            if i == 1:
                self.inside.set()
                assert self.gate.wait(10)
            yield chunk


def test_text_over_the_limit_is_refused_before_an_engine_sees_it(rig: Rig) -> None:
    # issue 12 item 5: speak() is the one entry point, so every path (agent, say, MQTT, REST,
    # console) is bounded here, whatever its own front door checks
    with pytest.raises(InvalidCommandError, match=r"^text of 2001 characters exceeds the 2000"):
        rig.speech.speak("a" * (MAX_SPEECH_TEXT + 1))
    with pytest.raises(InvalidCommandError, match="exceeds") as refused:
        rig.speech.speak("word " * 1_000_000)  # 5 MB: refused just as fast
    assert len(str(refused.value)) < 200  # quotes a short excerpt, never the text
    uid = rig.speech.speak("  " + "b" * MAX_SPEECH_TEXT + "  ")  # the limit itself is fine
    rig.speech.stop_speaking()
    assert rig.wait_ended(1)
    assert [e.utterance for e in rig.started()] == [uid]
    assert rig.tts.calls <= 1


@pytest.mark.parametrize("text", ["hi\x00there", "red \x1b[31m alert", "half \ud800 pair"])
def test_control_characters_are_refused_with_the_doors_message(rig: Rig, text: str) -> None:
    # issue 30: MCP's and the agent's say build Speak themselves; the service refuses a NUL,
    # an ESC or a lone surrogate as every door's parser does, in the same words
    from anima.wire.payloads import PayloadError, speech_text

    with pytest.raises(PayloadError) as door:
        speech_text(text)
    with pytest.raises(InvalidCommandError) as refused:
        rig.speech.speak(text)
    assert str(refused.value) == str(door.value)
    assert " at character " in str(refused.value)
    assert rig.started() == []
    assert rig.tts.calls == 0
    uid = rig.speech.speak("tab\there, and\r\nlines")  # tab and line ends are text
    rig.speech.stop_speaking()
    assert rig.wait_ended(1)
    assert [e.utterance for e in rig.started()] == [uid]


def test_speech_is_refused_during_an_estop_until_reset(rig: Rig) -> None:
    rig.motion.estop()
    with pytest.raises(CommandRefusedError, match=r"^speak refused: emergency stop is active"):
        rig.speech.speak("hello")
    rig.motion.reset()
    uid = rig.speech.speak("hello")
    assert rig.wait_ended(1)
    # events arrive in order: a start_speak of the refused one would have come first
    assert [e.utterance for e in rig.started()] == [uid]  # refused means no start_speak
    assert rig.ended()[0].reason == "done"


def test_a_stop_ends_the_utterance_at_once_even_inside_a_long_synthesis() -> None:
    engine = GatedEngine()
    rig = Rig(engine)
    rig.start()
    try:
        first = rig.speech.speak("one two three four five six seven eight")
        waiting = rig.speech.speak("and then some more")
        assert engine.inside.wait(5)  # the worker is stuck inside synthesize()
        rig.speech.stop_speaking("estop")
        assert rig.wait_ended(2)  # ended while the worker is still stuck
        assert [(e.utterance, e.reason) for e in rig.ended()] == [
            (first, "estop"),
            (waiting, "estop"),
        ]
        engine.gate.set()  # the worker comes back: it must not end the utterance again
        ok = rig.speech.speak("ok")
        # the worker ends "ok" after leaving the first, and events arrive in order: a second
        # end of the first would be here
        rig.recorder.wait_for(end_of(ok), 10.0)
        assert [(e.utterance, e.reason) for e in rig.ended()] == [
            (first, "estop"),
            (waiting, "estop"),
            (ok, "done"),
        ]
    finally:
        engine.gate.set()
        rig.stop()


def test_stopping_the_service_ends_every_utterance_with_shutdown() -> None:
    engine = GatedEngine()
    rig = Rig(engine)
    rig.start()
    try:
        ids = [rig.speech.speak(f"utterance number {i} of three") for i in range(3)]
        assert engine.inside.wait(5)
        rig.speech.stop()  # no gate opened: the worker is still inside synthesize()
        assert rig.wait_ended(3)
        assert [(e.utterance, e.reason) for e in rig.ended()] == [(i, "shutdown") for i in ids]
        with pytest.raises(CommandRefusedError, match="not running"):
            rig.speech.speak("too late")
    finally:
        engine.gate.set()
        rig.hub.stop()
        rig.motion.stop()
        if rig.jumping is not None:
            rig.jumping.close()


def test_an_estop_of_the_engine_itself_stops_speech_within_a_hop(fake_rig: Rig) -> None:
    # the runtime stops speech with its estop; the service also notices one made on the engine
    rig = fake_rig
    uid = rig.speech.speak("one two three four five six seven eight nine ten eleven twelve")
    rig.play(0.4)
    assert eventually(lambda: LIPS in rig.motion.state().overrides)
    rig.motion.estop()
    assert rig.wait_ended(1, timeout=2)
    assert [(e.utterance, e.reason) for e in rig.ended()] == [(uid, "estop")]
    frozen = rig.sink.played()
    assert abs(frozen - 0.4 * RATE) <= 1  # it stopped where it was
    rig.play(0.1)
    assert rig.sink.played() == frozen  # silent


@settings(
    max_examples=15,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(st.lists(st.sampled_from(["speak", "stop", "estop", "reset", "wait", "play"]), max_size=10))
def test_estops_refuse_or_end_but_every_start_still_has_exactly_one_end(
    fake_rig: Rig, script: list[str]
) -> None:
    rig = fake_rig
    ids: list[str] = []
    for step in script:
        if step == "speak":
            try:
                ids.append(rig.speech.speak("a few words"))
            except EStopActiveError:
                assert rig.motion.estopped  # refused only while the estop is on
        elif step == "stop":
            rig.speech.stop_speaking()
        elif step == "estop":
            rig.motion.estop()
            rig.speech.stop_speaking("estop")  # what Runtime.execute(EmergencyStop()) does
        elif step == "reset":
            rig.motion.reset()
        elif step == "wait":
            rig.play(0.03)
        else:
            rig.play(1.0)  # the current utterance plays out (0.84 s): the worker ends it
    rig.motion.reset()
    rig.speech.stop_speaking()
    deadline = time.monotonic() + 10
    for uid in ids:  # events arrive on the hub's thread: wait until every id has ended
        rig.recorder.wait_for(end_of(uid), max(0.0, deadline - time.monotonic()))
    rig.barrier()  # a second end would have arrived before it
    ends = [e.utterance for e in rig.ended()]
    assert all(ends.count(uid) == 1 for uid in ids)
    assert {e.utterance for e in rig.started()} >= set(ids)


def test_a_stop_gives_its_reason_even_when_the_worker_ends_the_utterance_first(
    fake_rig: Rig, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The worker, woken when a stop sets `finished`, may publish the end before the stopping
    thread does (here: the stopping thread is held up releasing the lips): the reason must still
    be the stop's, and `speaking` false once the end is out (both raced under load)."""
    rig = fake_rig
    engine = rig.motion
    stopper = threading.get_ident()

    class LateRelease:  # the engine, its lips released late on the stopping thread
        def __getattr__(self, name: str) -> object:
            return getattr(engine, name)

        def release_override(self, name: str) -> None:
            if threading.get_ident() == stopper:  # held until the worker's end is out
                rig.recorder.wait_for(SpeechEnded, 5.0)
            engine.release_override(name)

    # the service's engine replaced, not the engine's method: a compiled engine's methods are
    # read-only (anima.motion.compiled)
    monkeypatch.setattr(rig.speech, "_motion", LateRelease())
    rig.speech.speak("one two three four five six seven eight")
    rig.play(0.2)
    assert rig.sink.played() > 0
    rig.speech.stop_speaking()
    assert rig.wait_ended(1)
    assert [e.reason for e in rig.ended()] == ["stopped"]
    assert not rig.speech.speaking


class _SlowLoading(ScriptedEngine):
    """An engine whose voice loads until the test lets it."""

    def __init__(self) -> None:
        super().__init__()
        self.loading = threading.Event()
        self.gate = threading.Event()
        self.loaded = threading.Event()

    def load(self) -> None:
        self.loading.set()
        if self.gate.wait(30.0):
            self.loaded.set()


def test_stop_waits_for_engines_still_loading() -> None:
    # a thread left inside an engine's native code when the interpreter exits aborts the
    # process ("terminate called without an active exception"): `anima serve` got SIGINT while
    # a loaded machine took more than 2 s to load Piper, and exited -6 instead of 0
    engine = _SlowLoading()
    rig = Rig(engine, real=True)  # stop() waits in real time for a load
    rig.start()
    assert engine.loading.wait(10.0)
    stopper = threading.Thread(target=rig.stop, name="stopper", daemon=True)
    stopper.start()
    try:
        # a real wait: stop() used to give up after 2 s of the real clock
        stopper.join(2.5)
        waited = stopper.is_alive()
    finally:
        engine.gate.set()
    stopper.join(10.0)
    assert waited, "stop() returned while an engine was still loading"
    assert not stopper.is_alive()
    assert engine.loaded.is_set()  # stop() returned only once the load had
