"""Annotated speech on a fake clock: gestures start on the tick their word is first heard.

The motion engine is ticked by hand at 100 Hz on a :class:`FakeClock`; the null sink plays on
the same clock, so the playback clock and the ticks line up exactly. The speech service's own
threads synthesize (the scripted engine, with exact word marks) in real time, ahead of play.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import TypeVar

import pytest

from anima.animation.library import AnimationLibrary, shipped_folder
from anima.behaviour.controller import Behaviour
from anima.behaviour.speech_gestures import BehaviourGestures
from anima.errors import CommandRefusedError, InvalidCommandError
from anima.events import Event, EventHub, Notice, SpeechEnded, SpeechStarted
from anima.speech.base import AudioChunk
from anima.speech.cues import ACCENT
from anima.speech.service import SpeechService
from anima.speech.sinks import NullSink
from anima.speech.utterance import leading_silence
from anima.testing import EventRecorder, eventually
from anima.testing.harness import make_engine
from anima.testing.tts import RATE, ScriptedEngine

pytestmark = pytest.mark.fast

PERIOD = 0.01
E = TypeVar("E", bound=Event)


class Rig:
    def __init__(self, mode: str = "disabled") -> None:
        self.hub = EventHub()
        self.recorder = EventRecorder().attach(self.hub)
        self.engine, self.driver, self.clock = make_engine(events=self.hub)
        library = AnimationLibrary([shipped_folder()], len(self.engine.body))
        library.load()
        self.behaviour = Behaviour(self.engine, library, self.hub, self.clock)
        self.sink = NullSink(self.clock)
        self.tts = ScriptedEngine()
        self.speech = SpeechService(
            [self.tts],
            self.sink,
            self.engine,
            self.hub,
            self.clock,
            gestures=BehaviourGestures(self.behaviour, self.hub),
            gesture_mode="contextual" if mode == "contextual" else "disabled",
        )
        self.t = self.clock.now()
        self.hub.start()
        self.speech.start()

    def tick(self) -> None:
        self.t = round(self.t + PERIOD, 6)
        self.clock.advance(self.t - self.clock.now())
        self.engine.tick(self.t)

    def settled(self) -> None:
        """Wait (real time) until the worker has put what it is making in the sink."""
        assert eventually(lambda: not self.speech.synthesizing, timeout=10)

    def synthesized(self) -> None:
        """Wait (real time) until the worker has the utterance ready to play."""
        player = self.speech._player
        assert eventually(lambda: player.playback is not None, timeout=10)
        pb = player.playback
        assert pb is not None
        assert eventually(lambda: pb.synthesized, timeout=10)

    def word_onset(self, text: str, index: int) -> int:
        """The sample where word ``index`` of ``text`` is heard, as the service plays it."""
        samples, _ = self.tts.render(text)
        onset = self.tts.word_onsets[index]
        return onset - leading_silence(AudioChunk(samples[: int(0.2 * RATE)], RATE))

    def of(self, kind: type[E]) -> list[E]:
        self.hub.drain()
        return self.recorder.of(kind)

    def close(self) -> None:
        self.speech.stop()
        self.hub.stop()


@pytest.fixture
def rig() -> Iterator[Rig]:
    r = Rig()
    yield r
    r.close()


def test_a_gesture_starts_on_the_tick_its_word_is_first_heard(rig: Rig) -> None:
    rig.speech.speak("Hello there ^start(nod) my good friend")
    rig.synthesized()
    onset = rig.word_onset("Hello there my good friend", 2)
    started_at = None
    played_before = 0
    for _ in range(400):
        played_before = rig.sink.played()
        rig.tick()
        if rig.engine.state().move is not None:
            started_at = rig.sink.played()
            break
    assert started_at is not None, "the gesture never started"
    # this tick heard the word's first sample; the tick before had not reached it
    assert played_before < onset <= started_at
    assert started_at - onset <= PERIOD * RATE  # within one tick of the onset
    started = list(rig.of(SpeechStarted))
    assert [e.text for e in started] == ["Hello there my good friend"]


class Started(BehaviourGestures):
    """The behaviour's gestures, telling the test when the speech has started one."""

    def __init__(self, behaviour: Behaviour, events: EventHub) -> None:
        super().__init__(behaviour, events)
        self.started = threading.Event()

    def start(self, name: str) -> None:
        super().start(name)
        self.started.set()


def test_run_holds_the_speech_until_the_gesture_ends(rig: Rig) -> None:
    gestures = Started(rig.behaviour, rig.hub)
    rig.speech.cues.gestures = gestures
    rig.speech.speak("Look ^run(nod) done")
    duration = rig.behaviour.library.get("nod").duration
    ticks = 0
    first_end = rig.word_onset("Look", 0)  # anything past the first word's start
    # the worker synthesizes and holds on its thread, the ticks are the test's: each tick waits
    # for "Look" to be in the sink, and once it has played out (the sink starved), for the
    # worker to start ^run's gesture; that tick is not counted
    while rig.engine.state().move is None and ticks < 300:
        rig.settled()
        starved = rig.sink.played() >= rig.sink.written()
        if starved:
            assert gestures.started.wait(10), "^run never started the gesture"
        rig.tick()
        ticks += not starved
    assert rig.engine.state().move is not None, "^run never started the gesture"
    held = rig.sink.played()
    assert held > first_end
    while rig.engine.state().move is not None and ticks < 1000:
        rig.tick()
        ticks += 1
        if rig.engine.state().move is not None:
            assert rig.sink.played() == held, "the speech went on while ^run's gesture played"
    assert ticks * PERIOD >= duration
    # the gesture ended: the rest is spoken, then end_speak
    rig.synthesized()
    assert rig.sink.written() > held
    for _ in range(300):
        rig.tick()
    rig.recorder.wait_for(SpeechEnded)
    ended = rig.of(SpeechEnded)
    assert [e.reason for e in ended] == ["done"]


def test_a_stop_during_a_hold_ends_the_utterance_at_once(rig: Rig) -> None:
    rig.speech.speak("Look ^run(bow) done")
    for _ in range(200):
        rig.tick()
        if rig.engine.state().move is not None:
            break
    rig.speech.stop_speaking()
    rig.recorder.wait_for(SpeechEnded)
    assert [e.reason for e in rig.of(SpeechEnded)] == ["stopped"]
    assert eventually(lambda: not rig.speech.speaking, timeout=5)


@pytest.mark.parametrize(
    "text",
    ["Hi ^start(moonwalk) there", "Hi ^wait(nod) there", "^start(nod)", "Hi ^frobnicate(x)"],
)
def test_bad_annotations_are_refused_before_anything_is_said(rig: Rig, text: str) -> None:
    with pytest.raises(InvalidCommandError):
        rig.speech.speak(text)
    assert rig.of(SpeechStarted) == []
    assert not rig.speech.speaking


class Refusing(BehaviourGestures):
    def start(self, name: str) -> None:
        raise CommandRefusedError(f"{name!r} is refused (as a test)")


def test_a_refused_gesture_is_a_notice_and_the_speech_goes_on(rig: Rig) -> None:
    rig.speech.cues.gestures = Refusing(rig.behaviour, rig.hub)
    rig.speech.speak("Yes ^start(nod) indeed")
    rig.synthesized()
    for _ in range(300):
        rig.tick()
    rig.recorder.wait_for(SpeechEnded)
    assert [e.reason for e in rig.of(SpeechEnded)] == ["done"]
    notices = [e.message for e in rig.of(Notice)]
    assert any(m.startswith("gesture nod:") for m in notices), notices


def test_contextual_mode_tilts_the_head_on_a_question() -> None:
    rig = Rig(mode="contextual")
    try:
        rig.speech.speak("Shall we begin now?")
        rig.synthesized()
        onset = rig.word_onset("Shall we begin now?", 3)
        tilted = None
        for _ in range(300):
            rig.tick()
            if ACCENT in rig.engine.state().offsets:
                tilted = rig.sink.played()
                break
        assert tilted is not None
        assert onset <= tilted < onset + PERIOD * RATE
    finally:
        rig.close()
