"""The error families (issue 15): one ``except`` catches every refusal, or every link that is
down, whichever layer raised it; the context is in attributes, not only in the message."""

from __future__ import annotations

import pytest

from anima import commands as cmd
from anima.errors import (
    AnimaError,
    CommandNotAllowedError,
    CommandRefusedError,
    CommandRejectedByRobotError,
    DriverError,
    DriverNotConnectedError,
    EStopActiveError,
    HumanoidError,
    HumanoidNotConnectedError,
    NotConnectedError,
    RobotNotConnectedError,
)
from anima.humanoid.client import AdamClient
from anima.testing import FakeTimeRobot

pytestmark = pytest.mark.fast


@pytest.mark.parametrize(
    "kind", [EStopActiveError, CommandNotAllowedError, CommandRejectedByRobotError]
)
def test_every_refusal_is_a_command_refused_error(kind: type[AnimaError]) -> None:
    assert issubclass(kind, CommandRefusedError)


@pytest.mark.parametrize(
    ("kind", "also", "link"),
    [
        (DriverNotConnectedError, DriverError, "driver"),
        (HumanoidNotConnectedError, HumanoidError, "humanoid"),
        (RobotNotConnectedError, AnimaError, "robot"),
    ],
)
def test_every_link_down_is_a_not_connected_error(
    kind: type[NotConnectedError], also: type[AnimaError], link: str
) -> None:
    assert issubclass(kind, NotConnectedError)
    assert issubclass(kind, also)  # and still its layer's own error
    assert kind("x").link == link


def test_a_refusal_says_what_was_asked_and_why_apart_from_its_message() -> None:
    with FakeTimeRobot() as robot:
        robot.execute(cmd.EmergencyStop())
        with pytest.raises(CommandRefusedError) as refused:
            robot.execute(cmd.PlayAnimation(name="nod"))
    assert isinstance(refused.value, EStopActiveError)
    assert refused.value.command == "'nod'"
    assert refused.value.reason == "emergency stop is active"
    assert str(refused.value) == "'nod' refused: emergency stop is active (reset to resume)"
    sdk = CommandRejectedByRobotError("/api/animation", "unknown animation 'nxd'")
    assert (sdk.command, sdk.reason) == ("/api/animation", "unknown animation 'nxd'")
    plain = CommandRefusedError("the agent is not running (anima serve --agent)")
    assert plain.command is None
    assert plain.reason == str(plain)


def test_an_unreachable_humanoid_is_not_connected() -> None:
    client = AdamClient("127.0.0.1", 9, connect_timeout_s=0.2)  # discard port: nobody answers
    with pytest.raises(NotConnectedError, match=r"cannot reach Adam at 127\.0\.0\.1:9"):
        client.connect()
    with pytest.raises(HumanoidNotConnectedError, match="not connected to Adam"):
        client.state()
