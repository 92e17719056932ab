"""The humanoid over MQTT for the SDK: ``<prefix>/agent/control/humanoid/…`` and the retained
``<prefix>/agent/humanoid/state``, through :class:`anima.sdk.mqtt.MqttBackend`'s connection."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Protocol

from anima.errors import NotSupportedError
from anima.humanoid.commanded import poll_for_mode
from anima.sdk.humanoid import robot_state

if TYPE_CHECKING:
    from anima.humanoid.spec import RobotState
    from anima.wire.jsontypes import JsonObject


class Calls(Protocol):
    """What the humanoid needs of the MQTT backend (:class:`anima.sdk.mqtt.MqttBackend`)."""

    def humanoid_call(self, command: str, payload: str) -> str: ...

    def humanoid_state(self) -> JsonObject: ...


class MqttHumanoid:
    """A :class:`~anima.sdk.humanoid.HumanoidControl` over ``<prefix>/agent/control/humanoid/…``
    and the retained ``<prefix>/agent/humanoid/state``."""

    def __init__(self, backend: Calls, poll_s: float = 0.1) -> None:
        self._backend = backend
        self.poll_s = poll_s

    def state(self) -> RobotState:
        return robot_state(self._backend.humanoid_state())

    def wait_for_mode(self, mode: str, timeout_s: float = 15.0) -> RobotState:
        return poll_for_mode(self.state, mode, timeout_s, self.poll_s)

    def set_mode(self, mode: str) -> str:
        return self._backend.humanoid_call("mode", mode)

    def stand_motion(self, motion: str) -> str:
        return self._backend.humanoid_call("motion", motion)

    def posture(self, pitch: float, roll: float, yaw: float, height: float) -> str:
        body = {"pitch": pitch, "roll": roll, "yaw": yaw, "height": height}
        return self._backend.humanoid_call("posture", json.dumps(body))

    def speed(self, x: float, y: float, yaw: float, *, continuous: bool = False) -> str:
        if not continuous:
            raise NotSupportedError("over MQTT the humanoid walks continuously (continuous=True)")
        return self._backend.humanoid_call("speed", json.dumps({"x": x, "y": y, "yaw": yaw}))
