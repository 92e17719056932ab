"""The conversation loop on the simulated robot: heard → planned → acted, and interrupted."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from anima import commands as cmd
from anima.agent.assembly import build_conversation
from anima.drivers.sim import SimDriver
from anima.events import (
    ActionStatus,
    MoveFinished,
    MoveStarted,
    PlanFinished,
    PlanStarted,
    SpeechStarted,
    Transcript,
)
from anima.listening import ListenConfig
from anima.runtime import Runtime
from anima.speech.sinks import NullSink
from anima.testing import FakeTimeRobot, eventually
from anima.testing.tts import ScriptedEngine

from .conftest import Ears, Recorder, agent_moves, quiet_config
from .conftest import started_conversation as _conversation

pytestmark = pytest.mark.model

R_SHOULDER_PITCH = 12  # 0-based index in the shipped body


def test_a_heard_request_is_planned_and_acted(robot: FakeTimeRobot) -> None:
    robot.execute(cmd.Ask(text="wave"))
    wave = agent_moves(robot, "LOOKUP_Waving")
    robot.advance(1.2)
    assert robot.runtime.engine.last_frame[R_SHOULDER_PITCH] > 120  # the arm is up
    end = robot.advance_until(MoveFinished, within=10)
    assert end.t - wave.t > 2.0  # the whole wave, in fake seconds
    done = robot.settle_for(PlanFinished)
    assert done.outcome == "succeeded"


def test_an_unknown_request_is_answered_and_nothing_moves(robot: FakeTimeRobot) -> None:
    robot.execute(cmd.Ask(text="make me a sandwich"))
    said = robot.settle_for(SpeechStarted)
    assert said.text.startswith("Sorry")  # a refusal or "I didn't understand"
    robot.advance(15.0)  # the apology plays out
    robot.settle(lambda: robot.runtime.state().conversation == "engaged")  # the turn is over
    assert robot.recorder.of("plan_started") == []
    idle_life = "idle:" + robot.runtime.config.behaviour.full_blink_animation  # every 8 s still
    moves = [e for e in robot.recorder.of(MoveStarted) if getattr(e, "name", "") != idle_life]
    assert moves == []  # only the lips and the speech sway moved


def test_a_wake_while_acting_interrupts_the_plan_and_holds_the_motion(
    robot: FakeTimeRobot,
) -> None:
    robot.execute(cmd.Ask(text="wave"))
    agent_moves(robot, "LOOKUP_Waving")
    robot.advance(0.5)
    robot.execute(cmd.Listen())  # a wake from MQTT or the keyboard
    done = robot.settle_for(PlanFinished)
    assert done.outcome == "interrupted"
    assert "INTERRUPTED" in done.feedback or done.feedback == ""
    statuses = [e.status for e in robot.recorder.of(ActionStatus) if isinstance(e, ActionStatus)]
    assert "canceled" in statuses
    robot.advance(1.0)  # the wave decelerates to a hold
    assert robot.runtime.engine.is_idle
    held = robot.runtime.engine.last_frame[R_SHOULDER_PITCH]
    robot.advance(5.0)
    assert robot.runtime.engine.last_frame[R_SHOULDER_PITCH] == pytest.approx(held, abs=1.0)
    assert robot.recorder.of(lambda e: isinstance(e, MoveStarted) and e.t > done.t) == []


def test_a_wake_while_speaking_stops_the_speech(runtime: Runtime, recorder: Recorder) -> None:
    conv = _conversation(runtime)
    try:
        runtime.execute(cmd.Ask(text="say hello"))
        recorder.wait_for(lambda e: isinstance(e, SpeechStarted))
        runtime.execute(cmd.Listen())
        ended = recorder.wait_for(lambda e: e.kind == "end_speak", timeout=5)
        assert getattr(ended, "reason", "") == "stopped"
    finally:
        conv.stop()


def test_what_the_listener_sends_up_is_acted_on_then_published(
    runtime: Runtime, recorder: Recorder
) -> None:
    """The conversation is the listener's one consumer: each result is handled, and the ones
    the outside world is told of (wake, asr, listen_timeout, notice) are published, in order."""
    from anima.events import ListenTimeout, Notice, PlanStarted, WakeDetected
    from anima.listening import RecordingStart

    conv = _conversation(runtime)
    try:
        mark = recorder.mark()
        conv.take(WakeDetected(t=1.0, source="keyphrase", phrase="hey robot"))
        conv.take(RecordingStart(t=1.1, restarted=False))  # the round's timing: not published
        conv.take(Transcript(t=1.5, text="no", final=False))
        conv.take(Transcript(t=2.0, text="nod", final=True, confidence=0.9))
        conv.take(ListenTimeout(t=3.0, reason="no_speech", waited_s=5.0))
        conv.take(Notice(t=3.1, source="listen", message="a part fell back"))
        planned = recorder.wait_for(PlanStarted, since=mark)
        assert planned.steps == ("play_animation(name='nod')",)  # the final was planned
        recorder.wait_for(lambda e: isinstance(e, Notice) and e.source == "listen", since=mark)
        told = [e for e in recorder.events[mark:] if e.kind in ("wake", "asr", "listen_timeout")]
        assert [(e.kind, e.t) for e in told] == [
            ("wake", 1.0),
            ("asr", 1.5),
            ("asr", 2.0),
            ("listen_timeout", 3.0),
        ]
    finally:
        conv.stop()


def test_listen_and_ask_are_refused_without_an_agent(runtime: Runtime) -> None:
    from anima.errors import CommandRefusedError

    with pytest.raises(CommandRefusedError, match="agent is not running"):
        runtime.execute(cmd.Listen())


@pytest.fixture
def sphinx_runtime() -> Iterator[Runtime]:
    """The runtime with pocketsphinx's grammar (the whisper path is tested end to end by
    tests/test_serve_audio_in.py): this test is about the conversation's wiring."""
    config = dataclasses.replace(quiet_config(), listen=ListenConfig(asr="pocketsphinx"))
    rt = Runtime(config, driver=SimDriver(), audio_sink=NullSink(), tts=[ScriptedEngine()])
    rt.start()
    try:
        yield rt
    finally:
        rt.stop(ease=False)


def test_round_trip_from_synthesized_speech_to_motion(
    sphinx_runtime: Runtime, tmp_path: Path
) -> None:
    """anima's own TTS says "wave hello" into a WAV file; the agent hears it and waves."""
    runtime = sphinx_runtime
    recorder = Recorder()
    runtime.events.subscribe(recorder)
    from anima.errors import SpeechError
    from anima.listening.sources import write_wav
    from anima.speech.base import Cancel
    from anima.speech.espeak.espeak import EspeakEngine

    voice = EspeakEngine()
    try:
        voice.load()
    except SpeechError as exc:
        pytest.skip(f"eSpeak NG not available: {exc}")
    chunks = list(voice.synthesize("wave hello", "en-US", Cancel()))
    audio = np.concatenate([c.samples for c in chunks])
    silence = np.zeros(int(0.3 * chunks[0].sample_rate), dtype=np.int16)
    wav = tmp_path / "wave.wav"
    write_wav(
        wav, np.concatenate([silence, audio, silence, silence, silence]), chunks[0].sample_rate
    )
    conv = build_conversation(runtime, runtime.config, audio_in=str(wav))
    assert conv.listener is not None
    conv.listener.wake("test")  # the request comes right after a wake
    runtime.attach_agent(conv)  # started: the runtime runs
    try:
        heard = recorder.wait_for(lambda e: isinstance(e, Transcript) and e.final, timeout=10)
        assert isinstance(heard, Transcript)
        assert heard.text == "wave hello"
        recorder.wait_for(
            lambda e: isinstance(e, MoveStarted) and e.name == "LOOKUP_Waving", timeout=5
        )
        assert eventually(lambda: runtime.engine.last_frame[R_SHOULDER_PITCH] > 120)
    finally:
        runtime.detach_agent()


def test_the_rule_planner_ignores_the_listeners_wake_phrase() -> None:
    config = dataclasses.replace(
        quiet_config(), listen=ListenConfig(wake_phrase="hello nadine")
    )  # one wake phrase: the listener's; the planner strips it from a typed or heard request
    rt = Runtime(config, driver=SimDriver(), audio_sink=NullSink(), tts=[ScriptedEngine()])
    conv = build_conversation(rt, config, audio_in="none")
    try:
        assert conv.planner.plan("Hello Nadine, nod").actions == ["play_animation(name='nod')"]
        # (another robot's "hey robot" in front is now just words the understanding skips)
    finally:
        conv.planner.close()


def test_whisper_is_biased_with_every_phrase_and_pocketsphinx_gets_a_grammar(
    runtime: Runtime,
) -> None:
    from anima.agent.assembly import listening_phrases
    from anima.agent.vocabulary import robot_registry
    from anima.listening.makers import recognizer_name
    from anima.listening.whisper.text import prompt_text

    registry = robot_registry(runtime)
    words = listening_phrases(registry, ListenConfig(asr="whisper"))
    assert "say" in words  # "say {text}" by its fixed words
    assert not any("{" in w for w in words)
    assert words.index("wave") < words.index("say")  # the most asked-for first
    assert len(words) < len(registry.grammar_phrases())  # one phrase per call
    # each kind of action in turn: Whisper's ~160 characters hold gaze and speech, not only
    # gestures
    assert words[:4] == ["wave", "look up", "look at me", "say hello"]
    prompt = prompt_text(words, "hey robot")
    assert all(p in prompt.lower() for p in ("look left", "look down", "say hi", "stop"))
    grammar = listening_phrases(registry, ListenConfig(asr="pocketsphinx"))
    assert grammar == registry.grammar_phrases()
    assert recognizer_name(ListenConfig(asr="whisper")) == "whisper"
    assert recognizer_name(ListenConfig(asr="pocketsphinx")) == "pocketsphinx"


# ---------------------------------------------------------------------- other readings
def test_a_request_misheard_is_acted_on_as_the_other_reading_that_sounds_alike(
    runtime: Runtime, recorder: Recorder
) -> None:
    """Whisper's best reading says nothing ("Link for you."); a reading of its beam that sounds
    alike is the request. A reading understood is acted on as heard, whatever the others say."""
    conv = _conversation(runtime)
    try:
        conv.hear(
            Transcript(
                t=0.0,
                text="Link for you.",
                final=True,
                confidence=0.6,
                alternatives=("See you later.", "blink for me."),
            )
        )
        started = recorder.wait_for(lambda e: isinstance(e, PlanStarted), timeout=5)
        assert isinstance(started, PlanStarted)
        assert started.steps == ("play_animation(name='blink')",)
        recorder.wait_for(lambda e: isinstance(e, PlanFinished), timeout=10)
        conv.hear(
            Transcript(
                t=1.0, text="Nod.", final=True, confidence=0.9, alternatives=("Not.", "Wave.")
            )
        )
        nodded = recorder.wait_for(
            lambda e: isinstance(e, PlanStarted) and e is not started, timeout=5
        )
        assert isinstance(nodded, PlanStarted)
        assert nodded.steps == ("play_animation(name='nod')",)
    finally:
        conv.stop()
    notes = [getattr(e, "message", "") for e in recorder.of("notice")]
    assert "heard 'Link for you.', read as 'blink for me.' (another reading)" in notes
    assert not any("'Nod.', read as" in n for n in notes)


def test_a_request_read_as_nothing_is_read_again_with_the_nearest_phrases(
    runtime: Runtime, recorder: Recorder
) -> None:
    """Neither the best reading nor the others say anything: the recognizer reads the final
    again with the command phrases nearest its words as hints, and what sounds alike is done."""
    from anima.testing.listening import FakeRecognizer

    heard = "Look over to your light."
    ears = FakeRecognizer(rereads={heard: ["Look over to your light.", "Look over to your right."]})
    conv = _conversation(runtime)
    conv.listener = Ears(ears)  # type: ignore[assignment]
    try:
        conv.hear(
            Transcript(
                t=0.0,
                text=heard,
                final=True,
                confidence=0.6,
                alternatives=("You're covered in your light.",),
            )
        )
        started = recorder.wait_for(lambda e: isinstance(e, PlanStarted), timeout=5)
        assert isinstance(started, PlanStarted)
        assert started.steps == ("look_at(x=1.0, y=-0.6, z=0.0)",)
        ((text, hints),) = ears.hinted
        assert text == heard
        assert {"look left", "look right"} <= set(hints)
        conv.hear(Transcript(t=1.0, text="Nod.", final=True, confidence=0.9))
        recorder.wait_for(
            lambda e: isinstance(e, PlanStarted) and e.steps == ("play_animation(name='nod')",)
        )
        assert len(ears.hinted) == 1  # a request understood is never read again
    finally:
        conv.stop()
    notes = [getattr(e, "message", "") for e in recorder.of("notice")]
    assert f"heard {heard!r}, read again as 'Look over to your right.'" in notes
