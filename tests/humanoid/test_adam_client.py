"""AdamClient against a real server on 127.0.0.1:0 whose simulated Adam runs on a fake clock."""

from __future__ import annotations

import json
import logging
import math
from collections.abc import Iterator
from pathlib import Path

import pytest

from anima.errors import (
    CommandNotAllowedError,
    ConfigError,
    HumanoidError,
    InvalidCommandError,
    NonFiniteValueError,
)
from anima.humanoid import AdamClient
from anima.humanoid.arguments import load_ip_config
from anima.humanoid.spec import CONTROL_SWITCH_S, MOTIONS

pytestmark = pytest.mark.integration


@pytest.fixture
def client(served) -> Iterator[AdamClient]:
    """A client whose polling sleeps advance the server's fake clock."""
    sleeps: list[float] = []

    def sleep(seconds: float) -> None:
        sleeps.append(seconds)
        served.clock.advance(seconds)

    with AdamClient(
        "127.0.0.1", served.server.port, sleep=sleep, clock=served.clock, connect_timeout_s=5
    ) as c:
        c.sleeps = sleeps  # type: ignore[attr-defined]  # what the fake sleep was asked
        yield c


def test_the_documented_flow(client: AdamClient, served) -> None:
    for mode in ("Start", "Zero", "Stand"):
        assert client.set_mode(mode).startswith(f"entering {mode}")
        assert client.wait_for_mode(mode).fsm_name == mode
    assert client.stand_motion("Greeting") == "playing Greeting (4 s)"
    served.clock.advance(MOTIONS["Greeting"])
    assert client.posture(0.05, 0.0, 0.1, -0.1).startswith("posture pitch=0.05")
    assert client.dynamic(True) == "dynamic balance on"
    client.set_mode("Walk")
    client.wait_for_mode("Walk")
    assert client.speed(0.3, 0.0, 0.1, continuous=True).endswith("until changed")
    assert client.unigait_com(True) == "COM X balancing on"
    served.clock.advance(1.0)
    s = client.state()
    assert (s.x_vel, s.yaw_vel) == pytest.approx((0.3, 0.1))
    assert client.set_mode("Stop").startswith("emergency stop")
    assert client.clear_errors() == "drive errors cleared"
    assert client.lists().motion_list == tuple(MOTIONS)


def test_a_mode_not_in_the_list_is_refused_before_sending(client: AdamClient, served) -> None:
    with pytest.raises(CommandNotAllowedError) as caught:
        client.set_mode("Walk")
    message = str(caught.value)
    assert message == (
        "SetMode('Walk') is not allowed now: mode_enable_list is ['Start', 'Stop']; "
        "in Stop (drives off: SetMode Start)"
    )
    assert served.adam.state().fsm_name == "Stop"


def test_stand_commands_are_refused_outside_stand(client: AdamClient) -> None:
    with pytest.raises(CommandNotAllowedError, match=r"motion_enable_list is \[\]"):
        client.stand_motion("Greeting")
    with pytest.raises(CommandNotAllowedError, match=r"carrybox_enable_list is \[\]"):
        client.carry_box(1)
    with pytest.raises(CommandNotAllowedError, match=r"action_enable_list is \[\]"):
        client.posture(0, 0, 0, 0)
    with pytest.raises(CommandNotAllowedError, match="balance_control_enable is empty"):
        client.dynamic(True)
    with pytest.raises(CommandNotAllowedError, match="SetSpeed needs Walk or Run; in Stop"):
        client.speed(0.1, 0, 0)
    with pytest.raises(CommandNotAllowedError, match="AutoUnigaitCOM needs Walk or Run"):
        client.unigait_com(True)


def test_clear_and_close_only_in_stop(client: AdamClient, served) -> None:
    served.reach("Start")
    with pytest.raises(CommandNotAllowedError, match="SetErrorClear only in Stop; in Start"):
        client.clear_errors()
    with pytest.raises(CommandNotAllowedError, match="CloseProgram only in Stop"):
        client.close_program()
    client.set_mode("Stop")
    assert client.close_program() == "closing the robot control program"
    assert served.server.wait(5.0)


def test_values_are_checked_before_anything_is_sent() -> None:
    """Range errors need no robot: this client is not even connected."""
    adam = AdamClient("127.0.0.1", 1)
    with pytest.raises(
        InvalidCommandError, match=r"stand_roll=0.1 is out of range \[-0.06, 0.06\]"
    ):
        adam.posture(0.0, 0.1, 0.0, 0.0)
    with pytest.raises(NonFiniteValueError, match="stand_yaw is not finite"):
        adam.posture(0.0, 0.0, math.nan, 0.0)
    with pytest.raises(NonFiniteValueError, match="x_speed is not finite"):
        adam.speed(math.inf, 0, 0)
    with pytest.raises(InvalidCommandError, match="carry box must be 0"):
        adam.carry_box(3)
    with pytest.raises(InvalidCommandError, match="control mode must be traditional"):
        adam.set_control_mode("fast")
    with pytest.raises(HumanoidError, match="not connected"):
        adam.state()


def test_speed_limits_follow_the_gait(client: AdamClient, served) -> None:
    served.reach("Walk")
    with pytest.raises(InvalidCommandError, match=r"x_speed=2 is out of range \[-0.5, 1\] m/s"):
        client.speed(2.0, 0, 0)
    unchecked = AdamClient("127.0.0.1", served.server.port, speed_limits=None)
    with unchecked, pytest.raises(CommandNotAllowedError, match="the robot refused SetSpeed"):
        unchecked.speed(2.0, 0, 0)  # left to the robot, which refuses it too


def test_a_server_refusal_is_reported_as_not_allowed(client: AdamClient, served) -> None:
    served.reach("Stand")
    client.stand_motion("Greeting")
    served.clock.advance(MOTIONS["Greeting"])
    # between the query and the command the robot starts something else
    state = client.state
    client.state = lambda: (state(), served.adam.stand_motion("Stretching"))[0]  # type: ignore[method-assign]
    with pytest.raises(CommandNotAllowedError, match="the robot refused"):
        client.stand_motion("Greeting")


def test_set_control_mode_polls_until_confirmed(client: AdamClient, served) -> None:
    served.clock.advance(1.0)  # first feedback in
    assert client.set_control_mode("rl") == 1
    assert client.control_state() == 1
    assert client.sleeps == [0.5] * int(CONTROL_SWITCH_S / 0.5)  # type: ignore[attr-defined]
    assert client.state().current_control_mode == 1


def test_set_control_mode_returns_the_last_known_state_on_timeout(
    served, caplog: pytest.LogCaptureFixture
) -> None:
    fake = served.clock
    client = AdamClient(
        "127.0.0.1",
        served.server.port,
        sleep=fake.advance,
        clock=fake,
        control_timeout_s=0.4,  # gives up before the first feedback (1 s) and the switch (3 s)
    )
    with client, caplog.at_level(logging.WARNING, logger="anima.humanoid.client"):
        assert client.set_control_mode(1) == -1  # no feedback yet when it gave up
        assert "control mode still -1 after 0.4 s" in caplog.text
        fake.advance(5.0)
        assert client.set_control_mode(0) == 1  # switching back: RL is the last known


def test_set_control_mode_refused_while_walking(client: AdamClient, served) -> None:
    served.reach("Walk")
    with pytest.raises(CommandNotAllowedError, match="switch only at rest"):
        client.set_control_mode(1)


def test_wait_for_mode_times_out_clearly(client: AdamClient) -> None:
    with pytest.raises(HumanoidError, match="did not reach Stand within 2 s"):
        client.wait_for_mode("Stand", timeout_s=2.0)


def test_ip_config_json(tmp_path: Path, served, monkeypatch: pytest.MonkeyPatch) -> None:
    cfg = tmp_path / "ip_config.json"
    cfg.write_text(json.dumps({"ip": "127.0.0.1", "port": served.server.port}))
    with AdamClient(ip_config=cfg) as c:
        assert c.target == f"127.0.0.1:{served.server.port}"
        assert c.state().fsm_name == "Stop"
    monkeypatch.chdir(tmp_path)  # ./ip_config.json is read by default
    assert AdamClient().target == f"127.0.0.1:{served.server.port}"
    assert AdamClient(port=7).target == "127.0.0.1:7"  # arguments win
    cfg.write_text(json.dumps({"ip": "10.0.0.2", "port": "6666"}))
    assert load_ip_config(cfg) == ("10.0.0.2", 6666)


@pytest.mark.parametrize(
    ("text", "complaint"),
    [
        ("{", "cannot read the ip config"),
        ("[1, 2]", "expected a JSON object"),
        ('{"ip": "", "port": 6666}', "'ip' must be a non-empty string"),
        ('{"ip": "x", "port": 70000}', "'port' must be a port number"),
    ],
)
def test_a_bad_ip_config_names_the_file(tmp_path: Path, text: str, complaint: str) -> None:
    cfg = tmp_path / "ip_config.json"
    cfg.write_text(text)
    with pytest.raises(ConfigError, match=complaint) as caught:
        AdamClient(ip_config=cfg)
    assert str(cfg) in str(caught.value)


def test_connect_times_out_with_a_clear_error() -> None:
    from anima.frontdoors.mqtt.broker import free_port

    client = AdamClient("127.0.0.1", free_port(), connect_timeout_s=0.3)
    with pytest.raises(HumanoidError, match=r"cannot reach Adam at 127.0.0.1:\d+ within 0.3 s"):
        client.connect()


def test_a_lost_server_is_a_humanoid_error(served) -> None:
    client = AdamClient("127.0.0.1", served.server.port, call_timeout_s=1.0).connect()
    served.server.stop(grace_s=0.0)
    with pytest.raises(HumanoidError, match=r"GetRobotState to 127.0.0.1:\d+ failed: UNAVAILABLE"):
        client.state()
    client.close()
