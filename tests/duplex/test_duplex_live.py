"""Issue 14: full duplex through the live runtime — the robot's own voice played by its sink comes
back through a simulated room (RoomSource reads what the sink really played), the agent listens
through WebRTC's canceller with Silero and Whisper. The robot talking alone is never
interrupted; "wait, look at me" said over it stops it (end_speak reason interrupted) and is then
acted on; "okay" said over it lets it finish (heard by a fake recognizer: Whisper tiny reads
eSpeak's "okay" with the echo's remains as other words about 1 time in 8, which `anima bench
duplex` counts among the backchannel false stops). Played in real time, so run alone."""

from __future__ import annotations

import contextlib
import dataclasses
import importlib.util
import logging
import threading
from collections.abc import Iterator

import pytest
from tests.agent.conftest import quiet_config

from anima.agent.assembly import build_conversation
from anima.bench.conversation.audio import Speaker
from anima.config import AnimaConfig
from anima.drivers.sim import SimDriver
from anima.events import Event, SpeechEnded, SpeechStarted
from anima.listening.registry import whisper_installed
from anima.runtime import Runtime
from anima.speech.sinks import NullSink
from anima.testing import eventually
from anima.testing.listening import FakeRecognizer
from anima.testing.room import EchoPath, RoomSource

pytestmark = [
    pytest.mark.skipif(
        not whisper_installed()
        or any(importlib.util.find_spec(m) is None for m in ("livekit", "piper")),
        reason="needs the duplex, listen and speech extras",
    ),
    # a room in real time: a loaded machine stalls its frames (a short "okay" then went
    # unheard in 2 of 6 runs beside a benchmark), so make test runs these alone
    pytest.mark.serial,
]

LONG = (
    "Let me tell you a story. Once there was a little robot who lived by the sea, and every "
    "morning it watched the boats go out and counted the birds on the harbour wall."
)


class Ends:
    """The runtime's start_speak / end_speak, with a wait for the end of one utterance."""

    def __init__(self) -> None:
        self.started: list[SpeechStarted] = []
        self.ended: dict[str, str] = {}
        self._cond = threading.Condition()

    def __call__(self, event: Event) -> None:
        with self._cond:
            if isinstance(event, SpeechStarted):
                self.started.append(event)
            elif isinstance(event, SpeechEnded):
                self.ended[event.utterance] = event.reason
            self._cond.notify_all()

    def reason(self, utterance: str, timeout: float = 30.0) -> str:
        with self._cond:
            assert self._cond.wait_for(lambda: utterance in self.ended, timeout), "no end_speak"
            return self.ended[utterance]

    def ended_within(self, utterance: str, timeout: float) -> bool:
        with self._cond:
            return self._cond.wait_for(lambda: utterance in self.ended, timeout)

    def first_started(self, text: str, timeout: float = 10.0) -> str:
        with self._cond:
            found = self._cond.wait_for(lambda: any(s.text == text for s in self.started), timeout)
            assert found, f"never started: {text!r}"
            return next(s.utterance for s in self.started if s.text == text)


@pytest.fixture(scope="module")
def speaker() -> Speaker:
    return Speaker()


@pytest.fixture
def hears() -> list[str]:
    """What the recognizer hears (empty: Whisper; else a fake that hears these in turn)."""
    return []


@contextlib.contextmanager
def live_robot(hears: list[str], **listen: object) -> Iterator[tuple[Runtime, RoomSource, Ends]]:
    """The runtime in full duplex, its agent hearing a simulated room (``listen``: more of the
    listen section; ``hears``: a fake recognizer's texts, empty for Whisper)."""
    base = quiet_config()
    section = dataclasses.replace(base.listen, duplex=True, wake_word=False, **listen)
    config: AnimaConfig = dataclasses.replace(base, listen=section)
    runtime = Runtime(config, driver=SimDriver(history=5000), audio_sink=NullSink())
    runtime.start()
    assert runtime.playback is not None
    assert runtime.speech is not None
    room = RoomSource(runtime.playback.reader(), EchoPath(delay_s=0.04, gain_db=-3.0))
    ends = Ends()
    runtime.events.subscribe(ends, SpeechStarted.kind, SpeechEnded.kind)
    conversation = build_conversation(
        runtime, runtime.config, playback=runtime.playback, audio_in=room
    )
    if hears:
        assert conversation.listener is not None
        conversation.listener.recognizer = FakeRecognizer(hears)
    runtime.attach_agent(conversation)  # started: the runtime runs
    try:
        yield runtime, room, ends
    finally:
        runtime.stop(ease=False)  # the agent with it


@pytest.fixture
def robot(hears: list[str]) -> Iterator[tuple[Runtime, RoomSource, Ends]]:
    with live_robot(hears) as parts:
        yield parts


def test_the_robot_talking_alone_is_not_interrupted(
    robot: tuple[Runtime, RoomSource, Ends],
) -> None:
    runtime, _room, ends = robot
    assert runtime.speech is not None
    runtime.speech.speak(LONG, "en-US")
    assert ends.reason(ends.first_started(LONG)) == "done"


def test_a_request_over_the_robot_stops_it_and_is_acted_on(
    robot: tuple[Runtime, RoomSource, Ends], speaker: Speaker
) -> None:
    runtime, room, ends = robot
    assert runtime.speech is not None
    runtime.speech.speak(LONG, "en-US")
    utterance = ends.first_started(LONG)
    threading.Event().wait(1.5)  # into the robot's story
    request = speaker.say("espeak-us", "wait, look at me")
    room.say(request)
    # ~1 run in 5 (before issue 30 too) Whisper is unsure of the words through the echo
    # (confidence < listen.barge_in_confidence) and the robot rightly talks on: the person
    # says it again, as people do; a robot that never stops still fails
    if not ends.ended_within(utterance, 3.0):
        room.say(request)
    assert ends.reason(utterance) == "interrupted"
    agent = runtime.agent
    assert agent is not None
    assert eventually(lambda: agent.turns == 1, timeout=10)  # then heard as the next request


@pytest.mark.parametrize("hears", [["Okay."]])
def test_a_backchannel_over_the_robot_lets_it_finish(
    robot: tuple[Runtime, RoomSource, Ends], speaker: Speaker
) -> None:
    runtime, room, ends = robot
    assert runtime.speech is not None
    runtime.speech.speak(LONG, "en-US")
    utterance = ends.first_started(LONG)
    okay = speaker.say("espeak-us", "okay")
    for _ in range(3):  # a short "okay" the canceller's double-talk onset swallows went unheard
        threading.Event().wait(1.5)  # in ~1 run of 10: three, so one is heard
        room.say(okay)
    assert ends.reason(utterance) == "done"
    assert runtime.agent is not None
    barge = runtime.agent.interruptions.barge
    assert barge.heard >= 1
    # the last "okay" may still be in its round (its endpoint silence) as the robot finishes:
    # its decision comes when the round ends (a fresh clone failed on (1, 0) == (2, 0))
    assert eventually(lambda: not barge.pending, timeout=10)
    assert (barge.passed, barge.stops) == (barge.heard, 0)  # every one heard was let pass
    assert runtime.agent.turns == 0  # nor planned


@pytest.fixture
def early_robot() -> Iterator[tuple[Runtime, RoomSource, Ends]]:
    """The robot whose turns end after a fixed 1.2 s of silence (``listen.turn: silence``), so
    every request has its early pause (0.25 s) long before its end."""
    with live_robot([], turn="silence", endpoint_silence_s=1.2) as parts:
        yield parts


def test_an_early_reply_heard_back_through_the_room_does_not_take_itself_back(
    early_robot: tuple[Runtime, RoomSource, Ends],
    speaker: Speaker,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The reply begins 0.25 s into the person's silence, while the round still listens for
    1 s more: its own voice, back through the room and the canceller, must not read as the
    person going on."""
    runtime, room, ends = early_robot
    conversation = runtime.agent
    assert conversation is not None
    assert conversation.listener is not None
    caplog.set_level(logging.INFO, logger="anima")  # what the listener heard, if it fails
    conversation.listener.wake("manual")
    room.say(speaker.say("espeak-us", "what can you do"))
    assert eventually(lambda: conversation.early_replies >= 1, timeout=10)
    assert eventually(lambda: bool(ends.started), timeout=5)
    said = ends.started[0]
    assert said.text.startswith("I can")  # what it can do, begun before the turn's end
    heard = [
        r.getMessage()
        for r in caplog.records
        if r.name.startswith(("anima.listening", "anima.agent"))
    ]
    # spoken to its end, not taken back (one fresh clone in ~17 saw it "interrupted")
    assert ends.reason(said.utterance) == "done", heard
    assert conversation.taken_back == 0
    assert conversation.turns == 1  # planned once: the final confirmed it
