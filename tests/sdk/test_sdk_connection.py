"""Opening and closing a Robot, and the errors when there is no robot to talk to."""

from __future__ import annotations

import dataclasses

import pytest

from anima import Robot
from anima.config import SpeechConfig
from anima.drivers.sim import SimDriver
from anima.errors import (
    CommandRefusedError,
    CommandRejectedByRobotError,
    ConfigError,
    NotSupportedError,
    RobotNotConnectedError,
)
from anima.frontdoors.mqtt.broker import EmbeddedBroker, free_port

from .conftest import Served, ServeFactory, local_robot, sdk_config


def test_a_robot_that_is_not_open_says_so() -> None:
    robot = local_robot()
    assert not robot.is_open
    with pytest.raises(RobotNotConnectedError, match="not open"):
        robot.say("hello")
    with pytest.raises(RobotNotConnectedError):
        robot.state()
    remote = Robot.connect("mqtt://127.0.0.1:1", prefix="nowhere")
    with pytest.raises(RobotNotConnectedError, match="not open"):
        remote.play("nod")


def test_the_context_manager_opens_and_closes() -> None:
    with local_robot() as robot:
        assert robot.is_open
        assert robot.runtime.engine.running
        handle = robot.say("one two three four five six seven eight nine ten eleven twelve")
    assert not robot.is_open
    with pytest.raises(RobotNotConnectedError):
        handle.wait(5)  # closing fails what was still waiting
    with pytest.raises(RobotNotConnectedError):
        robot.look_at(1.0, 0.0, 0.0)


def test_no_broker_at_the_address() -> None:
    robot = Robot.connect(f"mqtt://127.0.0.1:{free_port()}", timeout=1.0)
    with pytest.raises(RobotNotConnectedError, match="no MQTT broker answered"):
        robot.open()
    assert not robot.is_open


def test_a_broker_without_a_runtime_on_that_prefix(embedded_broker: EmbeddedBroker) -> None:
    address = embedded_broker.address
    robot = Robot.connect(f"mqtt://{address.host}:{address.port}", prefix="empty", timeout=1.0)
    with pytest.raises(RobotNotConnectedError, match="no anima runtime is online on empty/"):
        robot.open()


def test_the_served_robot_is_reached_and_closed(served: Served) -> None:
    robot = Robot.connect(served.url, prefix=served.prefix, timeout=5.0)
    with robot:
        assert repr(robot).endswith("open)")
        with pytest.raises(NotSupportedError, match="no runtime in this process"):
            _ = robot.runtime
    with pytest.raises(RobotNotConnectedError):
        robot.stop_speaking()


@pytest.mark.parametrize("url", ["http://host:1883", "mqtt://", "mqtt://host:notaport"])
def test_bad_addresses_are_config_errors(url: str) -> None:
    with pytest.raises(ConfigError, match="robot address"):
        Robot.connect(url)


def test_speech_refused_in_process_says_why() -> None:
    cfg = dataclasses.replace(sdk_config(), speech=SpeechConfig(enabled=False))
    with Robot.local(cfg, driver=SimDriver()) as robot:
        refused = pytest.raises(CommandRefusedError, match="speech is not available")
        with refused:
            robot.say("hello")


def test_speech_refused_over_mqtt_carries_the_runtimes_reason(serve: ServeFactory) -> None:
    mute = serve(speech=False)
    with Robot.connect(mute.url, prefix=mute.prefix, timeout=5.0) as robot:
        errors: list[object] = []
        robot.on("error", errors.append)
        handle = robot.say("hello", wait=False)
        with pytest.raises(CommandRejectedByRobotError, match="speech is not available") as info:
            handle.wait()
        assert info.value.command == f"{mute.prefix}/agent/control/speak"
        assert "speech is disabled" in info.value.reason
