"""Humanoid commands as the front doors receive them: REST ``POST /api/humanoid/<command>`` and
MQTT ``<prefix>/agent/control/humanoid/<command>``.

Both parse the payload here, once, into a typed :data:`~anima.commands.HumanoidCommand`, so a
payload is refused with the same message whichever way it came. The runtime's ``execute`` sends
it to the robot, whose client reads the robot's state and refuses what its enable lists do not
allow now, with the robot's reason. The call is a gRPC round trip: front doors run it on a
worker thread, never on their network thread.

=========  ========================================  ===========================================
command    payload                                   command sent
=========  ========================================  ===========================================
mode       ``Start`` or ``{"mode": "Start"}``         SetMode, once the mode is enabled
motion     ``Greeting`` or ``{"motion": "Greeting"}`` SetStandMotion, once the motion is enabled
posture    ``{"pitch","roll","yaw","height"}``       SetStandAction (rad, rad, rad, m)
speed      ``{"x","y","yaw"}``                       SetSpeed, continuous (m/s, m/s, rad/s)
=========  ========================================  ===========================================
"""

from __future__ import annotations

from anima import commands as cmd
from anima.wire.jsontypes import JsonObject
from anima.wire.payloads import PayloadError, decode, json_object, name_field, number

COMMANDS = ("mode", "motion", "posture", "speed")
POSTURE_KEYS = ("pitch", "roll", "yaw", "height")
SPEED_KEYS = ("x", "y", "yaw")


def parse_humanoid(command: str, raw: bytes | str) -> cmd.HumanoidCommand:
    """The typed command for ``command`` (one of :data:`COMMANDS`) with payload ``raw``."""
    if command == "mode":
        return cmd.HumanoidMode(mode=name_field(raw, "mode"))
    if command == "motion":
        return cmd.HumanoidMotion(motion=name_field(raw, "motion"))
    if command == "posture":
        pitch, roll, yaw, height = _numbers(raw, POSTURE_KEYS)
        return cmd.HumanoidPosture(pitch=pitch, roll=roll, yaw=yaw, height=height)
    if command == "speed":
        x, y, w = _numbers(raw, SPEED_KEYS)
        return cmd.HumanoidSpeed(x=x, y=y, yaw=w, continuous=True)
    raise PayloadError(f"unknown humanoid command {command!r} (commands: {', '.join(COMMANDS)})")


def _numbers(raw: bytes | str, keys: tuple[str, ...]) -> list[float]:
    """The ``keys`` of a JSON object, each a finite number (ranges: AdamClient's)."""
    data: JsonObject = json_object(decode(raw), set(keys), set(keys))
    return [number(data[key], key) for key in keys]
