"""Speech through the runtime's commands, and Nadine's posture rule when speaking."""

from __future__ import annotations

import threading

import pytest

from anima import commands as cmd
from anima.config import AnimaConfig, MqttConfig
from anima.drivers.sim import SimDriver
from anima.errors import CommandRefusedError
from anima.events import Event, MoveStarted, SpeechEnded, SpeechStarted
from anima.motion import Goto
from anima.runtime import Runtime
from anima.speech.sinks import NullSink
from anima.testing.tts import ScriptedEngine


def _runtime(**kw: object) -> Runtime:
    cfg = AnimaConfig(mqtt=MqttConfig(enabled=False))
    return Runtime(cfg, driver=SimDriver(), audio_sink=NullSink(), **kw)  # type: ignore[arg-type]


def test_speak_and_stop_commands_reach_the_speech_service() -> None:
    rt = _runtime(tts=[ScriptedEngine()])
    seen: list[Event] = []
    ended = threading.Event()
    rt.events.subscribe(seen.append, SpeechStarted.kind, SpeechEnded.kind)
    rt.events.subscribe(lambda e: ended.set(), SpeechEnded.kind)
    rt.start()
    try:
        rt.execute(cmd.Speak(text="one two three four five six seven", locale="en-US"))
        assert rt.speaking
        rt.execute(cmd.StopSpeaking())
        assert ended.wait(5)
    finally:
        rt.stop(ease=False)
    kinds = [e.kind for e in seen]
    assert kinds == ["start_speak", "end_speak"]
    assert isinstance(seen[1], SpeechEnded)
    assert seen[1].reason == "stopped"


def test_speaking_returns_to_the_default_posture_unless_a_gaze_target_is_latched() -> None:
    rt = _runtime(tts=[ScriptedEngine()])
    starts: list[str] = []
    done = threading.Event()
    rt.events.subscribe(lambda e: starts.append(e.name), MoveStarted.kind)  # type: ignore[attr-defined]
    rt.events.subscribe(lambda e: done.set(), SpeechEnded.kind)
    rt.start()
    try:
        rt.engine.queue_move(Goto(rt.body, {"r_elbow": 180.0}, 0.2))  # away from the default
        assert rt.engine.wait_until_idle(3)
        rt.execute(cmd.Speak(text="hello", locale="en-US"))
        assert done.wait(5)
        assert "reset:LOOKUPPostureDefault" in starts
        starts.clear()
        done.clear()
        rt.behaviour.look_at_target("Posture_LookAtZoom")
        rt.engine.queue_move(Goto(rt.body, {"l_elbow": 180.0}, 0.2))
        assert rt.engine.wait_until_idle(3)
        rt.execute(cmd.Speak(text="hello again", locale="en-US"))
        assert done.wait(5)
        assert "reset:LOOKUPPostureDefault" not in starts  # latched: the posture stays
    finally:
        rt.stop(ease=False)


def test_no_reset_when_the_body_already_holds_the_default_posture() -> None:
    rt = _runtime(tts=[ScriptedEngine()])
    starts: list[str] = []
    done = threading.Event()
    rt.events.subscribe(lambda e: starts.append(e.name), MoveStarted.kind)  # type: ignore[attr-defined]
    rt.events.subscribe(lambda e: done.set(), SpeechEnded.kind)
    rt.start()
    try:
        rt.execute(cmd.Speak(text="hello", locale="en-US"))  # breathing moves the head: no matter
        assert done.wait(5)
    finally:
        rt.stop(ease=False)
    assert "reset:LOOKUPPostureDefault" not in starts


def test_without_an_engine_speak_is_refused_with_the_reason() -> None:
    rt = _runtime(tts=[])
    rt.start()
    try:
        with pytest.raises(CommandRefusedError, match="speech is not available"):
            rt.execute(cmd.Speak(text="hello", locale="en-US"))
        rt.execute(cmd.StopSpeaking())  # harmless
    finally:
        rt.stop(ease=False)
