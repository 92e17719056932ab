"""The humanoid over MQTT for the SDK: ``<prefix>/agent/control/humanoid/…`` and the retained
``<prefix>/agent/humanoid/state``, through :class:`anima.sdk.mqtt.MqttBackend`'s connection."""

from __future__ import annotations

import json
import threading
from typing import TYPE_CHECKING, Protocol

from anima.errors import AnimaError, NotSupportedError
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


class Call:
    """A humanoid command sent, waiting for its answer or refusal."""

    def __init__(self, command: str, request: str) -> None:
        self.command = command
        self.request = request
        self.done = threading.Event()
        self.answer = ""
        self.error: AnimaError | None = None


class PendingCalls:
    """The humanoid commands sent and not yet answered; an answer (or refusal) on the feedback
    topics is matched to its call by command and request (another client's is ignored)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._waiting: list[Call] = []

    def open(self, command: str, request: str) -> Call:
        call = Call(command, request)
        with self._lock:
            self._waiting.append(call)
        return call

    def forget(self, call: Call) -> None:
        with self._lock:
            if call in self._waiting:
                self._waiting.remove(call)

    def answered(
        self, command: str, request: str, answer: str | None, error: AnimaError | None
    ) -> None:
        with self._lock:
            call = next(
                (c for c in self._waiting if (c.command, c.request) == (command, request)), None
            )
            if call is None:
                return  # another client's, or one that timed out
            self._waiting.remove(call)
        call.answer, call.error = answer or "", error
        call.done.set()
