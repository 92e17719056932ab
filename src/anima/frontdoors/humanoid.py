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

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from anima.frontdoors.payloads import PayloadError, decode, json_object, name_field, number

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
        mode = name_field(raw, "mode")
        return HumanoidRequest(command, lambda c: c.set_mode(mode))
    if command == "motion":
        motion = name_field(raw, "motion")
        return HumanoidRequest(command, lambda c: c.stand_motion(motion))
    if command == "posture":
        pitch, roll, yaw, height = _numbers(raw, POSTURE_KEYS)
        return HumanoidRequest(command, lambda c: c.posture(pitch, roll, yaw, height))
    if command == "speed":
        x, y, w = _numbers(raw, SPEED_KEYS)
        return HumanoidRequest(command, lambda c: c.speed(x, y, w, continuous=True))
    raise PayloadError(f"unknown humanoid command {command!r} (commands: {', '.join(COMMANDS)})")


def _numbers(raw: bytes | str, keys: tuple[str, ...]) -> list[float]:
    """The ``keys`` of a JSON object, each a finite number (ranges: AdamClient's)."""
    data: dict[str, Any] = json_object(decode(raw), set(keys), set(keys))
    return [number(data[key], key) for key in keys]
