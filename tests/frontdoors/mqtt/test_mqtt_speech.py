"""speak / stop_speak over MQTT with a real speech service: start_speak then end_speak, paired."""

from __future__ import annotations

import dataclasses
import json

import pytest

from anima.config import SpeechConfig
from anima.drivers.sim import SimDriver
from anima.frontdoors.mqtt.frontdoor import MqttFrontDoor
from anima.runtime import Runtime
from anima.speech.sinks import NullSink
from anima.testing.mqtt import MqttProbe
from anima.testing.tts import ScriptedEngine
from anima.wire.mqtt import BrokerAddress
from anima.wire.topics import Topics

from .conftest import robot_config

pytestmark = pytest.mark.integration


def _speaking_robot(prefix: str, address: BrokerAddress) -> Runtime:
    cfg = dataclasses.replace(robot_config(prefix), speech=SpeechConfig(enabled=True))
    runtime = Runtime(cfg, driver=SimDriver(), tts=[ScriptedEngine()], audio_sink=NullSink())
    door = MqttFrontDoor(runtime, cfg.mqtt, address)
    runtime.attach(door)
    runtime.start()
    assert door.wait_connected(5)
    return runtime


def test_speak_gives_start_then_end_speak_with_one_id(
    broker: BrokerAddress, prefix: str, probe: MqttProbe, topics: Topics
) -> None:
    runtime = _speaking_robot(prefix, broker)
    try:
        mark = probe.mark()
        probe.publish(f"{topics.control}speak", '{"text": "hello there", "locale": "en-US"}', qos=1)
        start = probe.wait_for(topics.feedback("start_speak"), since=mark, timeout=5)
        end = probe.wait_for(topics.feedback("end_speak"), since=mark, timeout=10)
        s, e = json.loads(start.text()), json.loads(end.text())
        assert s["text"] == "hello there"
        assert s["locale"] == "en-US"
        assert e["id"] == s["id"]
        assert e["reason"] == "done"
        assert end.t > start.t

        mark = probe.mark()
        probe.publish(f"{topics.control}speak", "one two three four five six seven eight", qos=1)
        start = probe.wait_for(topics.feedback("start_speak"), since=mark, timeout=5)
        probe.publish(f"{topics.control}stop_speak", "", qos=1)
        end = probe.wait_for(topics.feedback("end_speak"), since=mark, timeout=5)
        ended = json.loads(end.text())
        assert ended.pop("t") >= json.loads(start.text())["t"]  # when, on the runtime's clock
        assert ended == {
            "v": 1,
            "id": json.loads(start.text())["id"],
            "reason": "stopped",
        }
    finally:
        runtime.stop(ease=False)
