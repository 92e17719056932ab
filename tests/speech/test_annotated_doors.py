"""Annotated speech on every door that speaks: MQTT on a real broker, the agent's plans, the
LLM's replies and prompt (REST: tests/web/test_web_api.py)."""

from __future__ import annotations

import json
import os

import pytest

from anima.agent.actions import ActionRegistry
from anima.agent.builtins import register_builtins
from anima.agent.plan import parse_plan
from anima.agent.planners.prompt import json_prompt, tools_prompt
from anima.agent.reply import say_reply
from anima.config import AnimaConfig, MqttConfig
from anima.drivers.sim import SimDriver
from anima.errors import PlanError
from anima.events import Event, MoveStarted, SpeechStarted
from anima.frontdoors.mqtt.frontdoor import MqttFrontDoor
from anima.runtime import Runtime
from anima.speech.sinks import NullSink
from anima.testing import eventually
from anima.testing.mosquitto import Mosquitto, find_mosquitto
from anima.testing.mqtt import MqttProbe
from anima.testing.tts import ScriptedEngine
from anima.wire.topics import Topics

pytestmark = pytest.mark.integration

GESTURES = ("nod", "shake", "LOOKUP_Waving", "bow")


@pytest.mark.skipif(find_mosquitto() is None, reason="mosquitto is not installed")
def test_over_mqtt_markers_play_and_bad_ones_are_refused_before_start_speak() -> None:
    prefix = f"annotated{os.getpid()}"
    cfg = AnimaConfig(mqtt=MqttConfig(prefix=prefix))
    topics = Topics(prefix)
    with Mosquitto() as broker, MqttProbe(broker.address, subscribe=f"{prefix}/agent/#") as probe:
        rt = Runtime(cfg, driver=SimDriver(), audio_sink=NullSink(), tts=[ScriptedEngine()])
        moves: list[Event] = []
        rt.events.subscribe(moves.append, MoveStarted.kind)
        door = MqttFrontDoor(rt, cfg.mqtt, broker.address)
        rt.attach(door)
        rt.start()
        try:
            assert door.wait_connected(5)
            mark = probe.mark()
            bad = json.dumps({"text": "Hi ^start(moonwalk) there"})
            probe.publish(topics.control + "speak", bad, qos=1)
            error = probe.wait_for(topics.feedback("error"), since=mark).json()
            assert "unknown animation 'moonwalk'" in error["reason"]
            probe.publish(topics.control + "speak", "Hi ^wave(x) there", qos=1)
            error = probe.wait_for(
                topics.feedback("error"), since=mark, where=lambda m: "^wave(" in m.text()
            ).json()
            assert "unknown speech marker" in error["reason"]
            good = json.dumps({"text": "Hello ^start(nod) there, my good friend"})
            probe.publish(topics.control + "speak", good, qos=1)
            started = probe.wait_for(topics.feedback("start_speak"), since=mark).json()
            assert started["text"] == "Hello there, my good friend"
            names = lambda: [getattr(m, "name", "") for m in moves]  # noqa: E731
            assert eventually(lambda: "nod" in names(), timeout=10)
            assert len(probe.messages(topics.feedback("start_speak"), since=mark)) == 1
        finally:
            rt.stop()


def registry() -> ActionRegistry:
    reg = ActionRegistry()
    register_builtins(reg, animations=GESTURES, postures=("LOOKUPPostureDefault",))
    return reg


def test_a_plan_saying_an_unknown_gesture_is_refused_before_it_runs() -> None:
    reg = registry()
    plan = parse_plan(reg, ["say(text='Hi ^start(nod) there')"])
    assert plan.steps[0].text == "say(text='Hi ^start(nod) there')"
    with pytest.raises(PlanError, match="unknown animation 'moonwalk'"):
        parse_plan(reg, ["play_animation(name='nod')", "say(text='Hi ^start(moonwalk) there')"])
    with pytest.raises(PlanError, match="no \\^start\\(nod\\) before it"):
        parse_plan(reg, ["say(text='Hi ^wait(nod) there')"])


def test_the_prompts_describe_the_markers_with_the_registrys_gestures_only() -> None:
    for prompt in (json_prompt(registry()), tools_prompt(registry())):
        line = next(p for p in prompt.split("\n\n") if "^start(name)" in p)
        assert "^run(name)" in line
        assert all(name in line for name in GESTURES)
        assert "breathingSlow" not in line
        assert len(line) < 400
    bare = ActionRegistry()
    assert "^start" not in json_prompt(bare)


def test_a_reply_with_a_refused_marker_is_said_without_it() -> None:
    rt = Runtime(
        AnimaConfig(mqtt=MqttConfig(enabled=False)),
        driver=SimDriver(),
        audio_sink=NullSink(),
        tts=[ScriptedEngine()],
    )
    said: list[Event] = []
    rt.events.subscribe(said.append, SpeechStarted.kind)
    notices: list[str] = []
    rt.start()
    try:
        assert rt.speech is not None
        say_reply(rt.execute, "Sure! ^start(moonwalk) Here we go.", "en-US", notices.append)
        assert eventually(lambda: len(said) == 1)
    finally:
        rt.stop(ease=False)
    assert said[0].text == "Sure! Here we go."  # type: ignore[attr-defined]
    assert notices
    assert "moonwalk" in notices[0]
