"""The humanoid over MQTT (beyond Nadine's contract): …/agent/control/humanoid/<command>, its
answers on …/agent/feedback/humanoid, refusals on the error topic, and the retained
…/agent/humanoid/state — on the simulated Adam, through both brokers."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator

import pytest

from anima.build import build
from anima.config import HumanoidConfig
from anima.drivers.sim import SimDriver
from anima.frontdoors.mqtt.frontdoor import MqttFrontDoor
from anima.runtime import Runtime
from anima.testing.mqtt import MqttProbe
from anima.wire.mqtt import BrokerAddress
from anima.wire.topics import Topics

from .conftest import robot_config

pytestmark = pytest.mark.integration


@pytest.fixture
def adam(broker: BrokerAddress, prefix: str, probe: MqttProbe) -> Iterator[Runtime]:
    """A runtime linked to the simulated Adam, behind an MQTT door on ``prefix``."""
    cfg = dataclasses.replace(
        robot_config(prefix), humanoid=HumanoidConfig(type="sim", sim_port=0, state_hz=20.0)
    )
    runtime = build(cfg, doors=False, driver=SimDriver())
    door = MqttFrontDoor(runtime, cfg.mqtt, broker)
    runtime.attach(door)
    runtime.start()
    try:
        assert door.wait_connected(5)
        yield runtime
    finally:
        runtime.stop(ease=False)  # easing to rest took a real second per test


def _body(message: object) -> dict[str, object]:
    data: dict[str, object] = json.loads(message.payload)  # type: ignore[attr-defined]
    return data


def test_commands_answer_and_the_state_is_retained(
    adam: Runtime, probe: MqttProbe, topics: Topics
) -> None:
    state = _body(probe.wait_for(topics.humanoid_state, timeout=5))
    assert state["fsm_name"] == "Stop"
    assert "Start" in state["mode_enable_list"]  # type: ignore[operator]

    mark = probe.mark()
    probe.publish(topics.control + "humanoid/mode", "Start", qos=1)
    answer = _body(probe.wait_for(topics.feedback("humanoid"), since=mark))
    assert answer["command"] == "mode"
    assert answer["request"] == "Start"
    assert isinstance(answer["answer"], str)
    probe.wait_for(
        topics.humanoid_state, since=mark, where=lambda m: _body(m)["fsm_name"] == "Start"
    )

    # not allowed now: the robot's reason on the error topic, nothing else happens
    mark = probe.mark()
    probe.publish(topics.control + "humanoid/mode", '{"mode": "Walk"}', qos=1)
    error = _body(probe.wait_for(topics.feedback("error"), since=mark))
    assert error["topic"] == topics.control + "humanoid/mode"
    assert "mode_enable_list" in str(error["reason"])
    assert probe.messages(topics.feedback("humanoid"), since=mark) == []


BAD = [
    ("humanoid/speed", '{"x": true, "y": 0, "yaw": 0}', "'x' must be a number, got true"),
    ("humanoid/posture", '{"pitch": 0}', "missing field 'height'"),
    ("humanoid/mode", '{"mode": 5}', "'mode' must be a non-empty string, got 5"),
    ("humanoid/fly", "high", "unknown humanoid command 'fly'"),
]


def test_bad_payloads_are_refused_with_the_reason(
    adam: Runtime, probe: MqttProbe, topics: Topics
) -> None:
    for leaf, payload, reason in BAD:
        mark = probe.mark()
        probe.publish(topics.control + leaf, payload, qos=1)
        error = _body(probe.wait_for(topics.feedback("error"), since=mark))
        assert str(error["reason"]).startswith(reason), error
        assert error["payload"] == payload


def test_without_a_humanoid_the_topics_say_so(
    runtime: Runtime, probe: MqttProbe, topics: Topics
) -> None:
    mark = probe.mark()
    probe.publish(topics.control + "humanoid/mode", "Start", qos=1)
    error = _body(probe.wait_for(topics.feedback("error"), since=mark))
    assert "no humanoid is linked" in str(error["reason"])
