"""The runtime with a humanoid: the simulated Adam served in-process, its state in the runtime's."""

from __future__ import annotations

import json

import pytest

from anima.build import build
from anima.config import AnimaConfig, HumanoidConfig, MqttConfig, SpeechConfig
from anima.drivers.sim import SimDriver
from anima.errors import ConfigError
from anima.frontdoors.mqtt.frontdoor import MqttFrontDoor
from anima.runtime import Runtime
from anima.testing import eventually
from anima.wire.mqtt import BrokerAddress

pytestmark = pytest.mark.integration


def _config(**humanoid: object) -> AnimaConfig:
    return AnimaConfig(
        mqtt=MqttConfig(enabled=False),
        speech=SpeechConfig(enabled=False),
        humanoid=HumanoidConfig(type="sim", sim_port=0, state_hz=20.0, **humanoid),  # type: ignore[arg-type]
    )


def test_sim_humanoid_runs_in_the_runtime_and_its_state_is_read() -> None:
    rt = build(_config(), doors=False, driver=SimDriver())
    rt.start()
    try:
        link = rt.humanoid
        assert link is not None
        assert link.client is not None
        assert eventually(lambda: link.summary() is not None)
        summary = link.summary()
        assert summary is not None
        assert summary.fsm == link.client.state().fsm_name
        link.client.set_mode("Start")  # the documented first step
        assert eventually(lambda: getattr(link.summary(), "fsm", None) == "Start")
        door = MqttFrontDoor(rt, MqttConfig(), BrokerAddress("127.0.0.1", 1))
        state = json.loads(door.state_payload())
        assert state["humanoid"]["fsm"] == "Start"
        assert len(state["humanoid"]["posture"]) == 4
        assert len(state["humanoid"]["velocity"]) == 3
    finally:
        rt.stop(ease=False)
    assert rt.humanoid is not None
    assert rt.humanoid.client is None  # stopped: calls are refused, not sent on a closed channel


def test_the_agent_built_before_start_has_the_humanoid_actions() -> None:
    """`anima serve --agent --humanoid sim` builds the agent before the runtime starts the link:
    walk, turn and stand must still be in its vocabulary (issue 13: they were missing)."""
    from anima.agent.vocabulary import robot_registry

    rt = build(_config(), doors=False, driver=SimDriver())
    registry = robot_registry(rt)  # before start, as serve builds the agent
    assert {"walk_forward", "walk_backward", "turn", "set_gait"} <= set(registry.names())


def test_the_agents_humanoid_reaches_the_robot_only_while_the_link_is_up() -> None:
    """The agent's humanoid actions send typed commands through the runtime's execute."""
    from anima.errors import CommandRefusedError
    from anima.humanoid.commanded import CommandedHumanoid

    rt = build(_config(), doors=False, driver=SimDriver())
    assert rt.humanoid is not None
    robot = CommandedHumanoid(rt.execute)
    with pytest.raises(CommandRefusedError, match="not connected"):
        robot.set_mode("Start")  # before start: a reason, not an AttributeError on None
    rt.start()
    try:
        robot.set_mode("Start")  # the documented first step, on the simulated Adam
        link = rt.humanoid
        assert eventually(lambda: getattr(link.summary(), "fsm", None) == "Start")
    finally:
        rt.stop(ease=False)
    with pytest.raises(CommandRefusedError, match="not connected"):
        robot.set_mode("Zero")


def test_humanoid_commands_without_a_humanoid_are_refused_with_the_way_to_link_one() -> None:
    from anima import commands as cmd
    from anima.errors import CommandRefusedError

    rt = Runtime(AnimaConfig(mqtt=MqttConfig(enabled=False), speech=SpeechConfig(enabled=False)))
    for command in (
        cmd.HumanoidMode(mode="Start"),
        cmd.HumanoidSpeed(x=0.1, y=0.0, yaw=0.0),
        cmd.ReadHumanoidState(),
    ):
        with pytest.raises(CommandRefusedError, match=r"--humanoid sim\|adam"):
            rt.execute(command)


def test_without_a_humanoid_the_state_says_none() -> None:
    rt = Runtime(AnimaConfig(mqtt=MqttConfig(enabled=False), speech=SpeechConfig(enabled=False)))
    door = MqttFrontDoor(rt, MqttConfig(), BrokerAddress("127.0.0.1", 1))
    assert json.loads(door.state_payload())["humanoid"] is None


def test_an_unreachable_robot_stops_the_runtime_cleanly() -> None:
    cfg = AnimaConfig(
        mqtt=MqttConfig(enabled=False),
        speech=SpeechConfig(enabled=False),
        humanoid=HumanoidConfig(type="adam", address="127.0.0.1:1"),
    )
    rt = build(cfg, doors=False, driver=SimDriver())
    with pytest.raises(Exception, match="cannot reach Adam"):
        rt.start()
    assert not rt.engine.running


def test_a_bad_humanoid_type_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match=r"humanoid\.type"):
        HumanoidConfig(type="robot")


def test_a_humanoid_that_stopped_answering_shows_in_the_health() -> None:
    """Issue 30: every command UNAVAILABLE, and the health said nothing."""
    from anima import commands as cmd
    from anima.errors import HumanoidNotConnectedError

    rt = build(_config(), doors=False, driver=SimDriver())
    rt.start()
    try:
        link = rt.humanoid
        assert link is not None
        assert eventually(lambda: link.summary() is not None)
        assert not any("humanoid" in w for w in rt.health.now().warnings)
        assert link.server is not None
        link.server.stop(timeout_s=0.5)  # the robot goes quiet: its port answers nothing
        with pytest.raises(HumanoidNotConnectedError, match="UNAVAILABLE"):
            rt.execute(cmd.HumanoidMode(mode="Start"))
        health = rt.health.now()
        assert not health.ok
        assert any(w.startswith("humanoid not answering:") for w in health.warnings), health
        assert any("UNAVAILABLE" in w for w in health.warnings)
    finally:
        rt.stop(ease=False)
