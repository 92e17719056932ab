"""What a :class:`~anima.sdk.robot.Robot` needs from the way it reaches the robot.

Three backends implement it: :mod:`anima.sdk.local` (the runtime in this process), and for a
running ``anima serve`` :mod:`anima.sdk.mqtt` (its MQTT contract) and :mod:`anima.sdk.http` (its
REST API and WebSocket). The snapshot and event names are shared, so a
script does not care which one it has.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from anima.errors import InvalidCommandError, NonFiniteValueError
from anima.events import (
    CommandRejected,
    Event,
    MoveFinished,
    Notice,
    SpeechEnded,
    SpeechStarted,
)
from anima.wire.jsontypes import JsonObject
from anima.wire.state import RuntimeState

if TYPE_CHECKING:
    from anima.sdk.handles import AnimationHandle, SpeechHandle
    from anima.sdk.humanoid import HumanoidActions

# The events a script can subscribe to with Robot.on(kind, fn), and the class fn receives:
EVENT_KINDS: dict[str, type[Event]] = {
    "start_speak": SpeechStarted,  # an utterance's audio starts
    "end_speak": SpeechEnded,  # it ended: done, stopped or error
    "animation_done": MoveFinished,  # a library animation finished or was cut
    "error": CommandRejected,  # a command was refused (over MQTT: the error topic)
    "notice": Notice,  # worth knowing, not an error (a look-at point out of reach)
}


def hub_kind(kind: str) -> str:
    """The kind the events of Robot.on's ``kind`` carry on an EventHub (checked)."""
    check_kind(kind)
    return EVENT_KINDS[kind].kind


# The animations a remote robot plays as idle layers (no animation_done comes: their handle is
# done at once), guessed by name: only the MQTT and HTTP backends use it. Runtime.execute says
# it (Played.idle_layer, what the local backend reads), but neither wire carries it: the REST
# reply is {"v", "accepted"} whatever the command, and MQTT answers a command only with its
# refusal; the robot's blink and looping idle animations are its config, not in its state.
IDLE_ANIMATIONS = ("blink", "breathingSlow")


def check_point(x: float, y: float, z: float) -> None:
    """A look-at point a remote robot would refuse: say so before sending it."""
    for axis, v in (("x", x), ("y", y), ("z", z)):
        if not math.isfinite(v):
            raise NonFiniteValueError(f"look_at: {axis} is not finite ({v!r})")


def check_kind(kind: str) -> None:
    if kind not in EVENT_KINDS:
        raise InvalidCommandError(
            f"unknown event kind {kind!r} (kinds: {', '.join(sorted(EVENT_KINDS))})"
        )


@dataclass(frozen=True, kw_only=True)
class HumanoidSnapshot:
    """The linked humanoid's part of the state."""

    fsm: str  # its mode: Stop, Start, Zero, Stand, Walk, …
    motion: str  # the stand motion it plays ("" when none)
    error: str = ""  # why its last state read failed ("" when it worked)


@dataclass(frozen=True, kw_only=True)
class RobotSnapshot:
    """The robot's state at one moment (over MQTT: the last retained state message)."""

    t: float  # the runtime's monotonic clock, seconds
    move: str | None  # the running primary move
    queued: int  # moves waiting behind it
    gaze_target: str | None  # the latched gaze posture
    looking: bool  # a position look-at is active
    speaking: bool  # an utterance plays or waits
    shutdown: bool  # the robot was shut down (wake it first)
    estop: bool  # the emergency stop is latched
    driver_connected: bool  # the driver reaches the hardware (or the simulation)
    humanoid: HumanoidSnapshot | None = None  # when a humanoid is linked


class Backend(Protocol):
    """One way of reaching a robot; opened and closed by its Robot."""

    description: str  # for messages: "local runtime", "mqtt://host:1883 prefix nadine"

    def open(self, timeout: float) -> None: ...

    def close(self) -> None: ...

    def say(self, text: str, locale: str, timeout: float) -> SpeechHandle: ...

    def stop_speaking(self) -> None: ...

    def play(self, name: str, timeout: float) -> AnimationHandle: ...

    def stop_animation(self) -> None: ...

    def cancel_animation(self, name: str) -> None: ...

    def look_at(self, x: float, y: float, z: float) -> None: ...

    def look_at_target(self, name: str) -> None: ...

    def end_look_at(self) -> None: ...

    def estop(self) -> None: ...

    def reset(self) -> None: ...

    def state(self, timeout: float) -> RobotSnapshot: ...

    def subscribe(self, kind: str, fn: Callable[[Event], None]) -> Callable[[], None]: ...

    def humanoid(self) -> HumanoidActions: ...


def snapshot_of(state: RuntimeState) -> RobotSnapshot:
    """The script's view of the runtime's snapshot (:class:`anima.wire.state.RuntimeState`)."""
    h = state.humanoid
    humanoid = None if h is None else HumanoidSnapshot(fsm=h.fsm, motion=h.motion, error=h.error)
    return RobotSnapshot(
        t=state.t,
        move=state.move,
        queued=state.queued,
        gaze_target=state.gaze_target,
        looking=state.looking,
        speaking=state.speaking,
        shutdown=state.shutdown,
        estop=state.estop,
        driver_connected=state.driver_connected,
        humanoid=humanoid,
    )


def snapshot_from_state(data: JsonObject) -> RobotSnapshot:
    """A snapshot from the runtime's state payload (MQTT ``…/agent/state``, REST ``/api/state``)."""
    return snapshot_of(RuntimeState.from_json(data))
