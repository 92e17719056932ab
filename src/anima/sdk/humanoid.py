"""The linked humanoid's actions, for scripts: modes, stand motions, posture, walking.

A thin face over a :class:`HumanoidControl`: in-process, typed commands through the runtime's
``execute`` (:class:`~anima.humanoid.commanded.CommandedHumanoid`; the link's AdamClient checks
the robot's enable lists before each command and raises CommandNotAllowedError with the
reason); over REST, the served runtime's humanoid endpoints
(:class:`anima.sdk.http.RestHumanoid`), which do the same on the robot's side.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from anima.humanoid.commanded import HumanoidControl
from anima.humanoid.spec import RobotState
from anima.wire.jsontypes import JsonObject

__all__ = ["HumanoidActions", "HumanoidControl", "robot_state"]


def robot_state(data: JsonObject) -> RobotState:
    """A :class:`RobotState` from its JSON form (REST ``/api/humanoid/state``, MQTT
    ``…/agent/humanoid/state``): lists become tuples, other keys (``v``, ``error``) are dropped."""
    names = {f.name for f in dataclasses.fields(RobotState)}
    fields: dict[str, Any] = {
        k: tuple(v) if isinstance(v, list) else v for k, v in data.items() if k in names
    }
    return RobotState(**fields)


class HumanoidActions:
    """What a script can ask the humanoid (``robot.humanoid``)."""

    def __init__(self, client: HumanoidControl) -> None:
        self._client = client

    def set_mode(self, mode: str, *, wait: bool = False, timeout: float = 15.0) -> str:
        """Switch mode (Start → Zero → Stand, then Walk or Run); ``wait`` until it is reached."""
        answer = self._client.set_mode(mode)
        if wait:
            self._client.wait_for_mode(mode, timeout)
        return answer

    def stand_up(self, timeout: float = 15.0) -> None:
        """Get to Stand, whatever the mode: from Stop through Start and Zero; blocks."""
        from anima.humanoid.spec import STAND, START, STOP, ZERO

        order = (START, ZERO, STAND)
        current = self._client.state().fsm_name
        if current in order:
            steps = order[order.index(current) + 1 :]
        else:  # from Stop the whole way; from a gait (Walk, Run) back to Stand
            steps = order if current == STOP else (STAND,)
        for mode in steps:
            self.set_mode(mode, wait=True, timeout=timeout)

    def stand_motion(self, motion: str) -> str:
        """Play a stand motion ("Greeting", "Stretching", …) in Stand."""
        return self._client.stand_motion(motion)

    def posture(self, pitch: float, roll: float, yaw: float, height: float) -> str:
        """Lean the standing body: pitch ±0.1, roll ±0.06, yaw ±0.25 rad, height -0.2…0 m."""
        return self._client.posture(pitch, roll, yaw, height)

    def walk(self, x: float, y: float = 0.0, yaw: float = 0.0) -> str:
        """Walk at this velocity (m/s, m/s, rad/s) until :meth:`stop_walking`; needs Walk/Run."""
        return self._client.speed(x, y, yaw, continuous=True)

    def stop_walking(self) -> str:
        """Stand still in the current gait."""
        return self._client.speed(0.0, 0.0, 0.0, continuous=True)

    def state(self) -> RobotState:
        """The humanoid's own state: mode, motion, posture, velocity, what it accepts now."""
        return self._client.state()
