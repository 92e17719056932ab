"""Humanoid commands as the front doors receive them: REST ``POST /api/humanoid/<command>`` and
MQTT ``<prefix>/agent/control/humanoid/<command>``.

Both parse the payload here, once, into a call on the runtime's
:class:`~anima.humanoid.client.AdamClient`, so a payload is refused with the same message
whichever way it came. The client then reads the robot's state and refuses what its enable lists
do not allow now, with the robot's reason. The call is a gRPC round trip: front doors run it on a
worker thread, never on their network thread.

=========  ========================================  ===========================================
command    payload                                   call
=========  ========================================  ===========================================
mode       ``Start`` or ``{"mode": "Start"}``         SetMode, once the mode is enabled
motion     ``Greeting`` or ``{"motion": "Greeting"}`` SetStandMotion, once the motion is enabled
posture    ``{"pitch","roll","yaw","height"}``       SetStandAction (rad, rad, rad, m)
speed      ``{"x","y","yaw"}``                       SetSpeed, continuous (m/s, m/s, rad/s)
=========  ========================================  ===========================================
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from anima.frontdoors.payloads import PayloadError, checked_name, decode, json_object

if TYPE_CHECKING:
    from anima.humanoid.client import AdamClient

COMMANDS = ("mode", "motion", "posture", "speed")
POSTURE_KEYS = ("pitch", "roll", "yaw", "height")
SPEED_KEYS = ("x", "y", "yaw")
NO_HUMANOID = "no humanoid is linked (anima serve --humanoid sim|adam)"


@dataclass(frozen=True)
class HumanoidRequest:
    """A parsed humanoid command: ``call(client)`` runs it and returns the robot's answer."""

    command: str
    call: Callable[[AdamClient], str]


def parse_humanoid(command: str, raw: bytes | str) -> HumanoidRequest:
    """The request for ``command`` (one of :data:`COMMANDS`) with payload ``raw``."""
    if command == "mode":
        mode = _name_or_field(raw, "mode")
        return HumanoidRequest(command, lambda c: c.set_mode(mode))
    if command == "motion":
        motion = _name_or_field(raw, "motion")
        return HumanoidRequest(command, lambda c: c.stand_motion(motion))
    if command == "posture":
        pitch, roll, yaw, height = _numbers(raw, POSTURE_KEYS)
        return HumanoidRequest(command, lambda c: c.posture(pitch, roll, yaw, height))
    if command == "speed":
        x, y, w = _numbers(raw, SPEED_KEYS)
        return HumanoidRequest(command, lambda c: c.speed(x, y, w, continuous=True))
    raise PayloadError(f"unknown humanoid command {command!r} (commands: {', '.join(COMMANDS)})")


def _name_or_field(raw: bytes | str, key: str) -> str:
    text = decode(raw)
    if not text.startswith("{"):
        return checked_name(text)
    value = json_object(text, {key}, {key})[key]
    if not isinstance(value, str) or not value.strip():
        raise PayloadError(f"{key!r} must be a non-empty string, got {json.dumps(value)}")
    return checked_name(value)


def _numbers(raw: bytes | str, keys: tuple[str, ...]) -> list[float]:
    """The ``keys`` of a JSON object, each a number (ranges and finiteness: AdamClient's)."""
    data: dict[str, Any] = json_object(decode(raw), set(keys), set(keys))
    values = []
    for key in keys:
        v = data[key]
        if isinstance(v, bool) or not isinstance(v, int | float):
            raise PayloadError(f"{key!r} must be a number, got {json.dumps(v)}")
        values.append(float(v))
    return values
