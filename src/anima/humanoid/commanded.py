"""The linked humanoid as the agent and scripts call it: typed commands through ``execute``.

:class:`CommandedHumanoid` has AdamClient's methods, but each call is a typed command
(:data:`~anima.commands.HumanoidCommand`, :class:`~anima.commands.ReadHumanoidState`) that the
runtime's ``execute`` routes to its link: the same path as the front doors', refused with the
reason while no humanoid is linked or the link is down.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Protocol

from anima import commands as cmd
from anima.errors import HumanoidError
from anima.humanoid.spec import RobotState


class HumanoidControl(Protocol):
    """A humanoid as the agent's actions and scripts drive it: AdamClient,
    :class:`CommandedHumanoid` (through the runtime's ``execute``), and the SDK's REST and
    MQTT stand-ins all have these; each command returns the robot's answer."""

    def state(self) -> RobotState: ...

    def wait_for_mode(self, mode: str, timeout_s: float = 15.0) -> RobotState: ...

    def set_mode(self, mode: str) -> str: ...

    def stand_motion(self, motion: str) -> str: ...

    def posture(self, pitch: float, roll: float, yaw: float, height: float) -> str: ...

    def speed(self, x: float, y: float, yaw: float, *, continuous: bool = False) -> str: ...


def poll_for_mode(
    read: Callable[[], RobotState], mode: str, timeout_s: float, poll_s: float
) -> RobotState:
    """Read the state every ``poll_s`` until ``fsm_name`` is ``mode``; HumanoidError after
    ``timeout_s``."""
    deadline = time.monotonic() + timeout_s
    while True:
        s = read()
        if s.fsm_name == mode:
            return s
        if time.monotonic() >= deadline:
            raise HumanoidError(f"the humanoid did not reach {mode} within {timeout_s:g} s")
        time.sleep(poll_s)


class CommandedHumanoid:
    """AdamClient's calls as typed commands carried out by ``execute``."""

    def __init__(self, execute: cmd.Execute, poll_s: float = 0.05) -> None:
        self._execute = execute
        self.poll_s = poll_s  # GetRobotState while waiting for a mode

    def state(self) -> RobotState:
        return self._execute(cmd.ReadHumanoidState())

    def wait_for_mode(self, mode: str, timeout_s: float = 15.0) -> RobotState:
        return poll_for_mode(self.state, mode, timeout_s, self.poll_s)

    def speed(self, x: float, y: float, yaw: float, *, continuous: bool = False) -> str:
        return self._execute(cmd.HumanoidSpeed(x=x, y=y, yaw=yaw, continuous=continuous)).answer

    def stand_motion(self, motion: str) -> str:
        return self._execute(cmd.HumanoidMotion(motion=motion)).answer

    def posture(self, pitch: float, roll: float, yaw: float, height: float) -> str:
        command = cmd.HumanoidPosture(pitch=pitch, roll=roll, yaw=yaw, height=height)
        return self._execute(command).answer

    def set_mode(self, mode: str) -> str:
        return self._execute(cmd.HumanoidMode(mode=mode)).answer
