"""robot.humanoid: the simulated Adam driven in-process (its AdamClient), over REST (the served
runtime's /api/humanoid endpoints) and over MQTT (…/agent/control/humanoid/…): the same script,
the same results."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from anima import Robot
from anima.errors import AnimaError, CommandNotAllowedError, CommandRejectedByRobotError

from .conftest import TIMEOUT, ServeFactory, eventually, local_robot

pytestmark = pytest.mark.integration


@pytest.fixture(params=["local", "http", "mqtt"])
def robot(request: pytest.FixtureRequest) -> Iterator[Robot]:
    if request.param == "local":
        r = local_robot(request.getfixturevalue("clock"), humanoid="sim")
    else:
        serve: ServeFactory = request.getfixturevalue("serve")
        served = serve(speech=False, humanoid="sim")
        if request.param == "http":
            r = Robot.connect(served.http_url, timeout=TIMEOUT)
        else:
            r = Robot.connect(served.url, prefix=served.prefix, timeout=TIMEOUT)
    with r:
        yield r


def test_stand_lean_walk_and_stop(robot: Robot) -> None:
    body = robot.humanoid
    assert body.state().fsm_name == "Stop"
    # not allowed from Stop: refused with the enable list, by the client or by the robot's side
    with pytest.raises((CommandNotAllowedError, CommandRejectedByRobotError), match="enable_list"):
        body.stand_motion("Greeting")
    body.stand_up()
    assert body.state().fsm_name == "Stand"
    with pytest.raises(AnimaError, match="stand_pitch"):
        body.posture(1.0, 0.0, 0.0, 0.0)  # outside ±0.1 rad: refused with the range
    body.posture(0.05, 0.0, 0.1, -0.05)
    eventually(lambda: abs(body.state().stand_yaw - 0.1) < 0.01)
    body.set_mode("Walk", wait=True)
    body.walk(0.3)
    eventually(lambda: body.state().x_vel > 0.2)
    body.stop_walking()
    eventually(lambda: abs(body.state().x_vel) < 0.01)
