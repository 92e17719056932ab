"""The REST request bodies as OpenAPI describes them: field names, types and bounds.

Written from the values the parsers check (:mod:`anima.wire.payloads`,
:mod:`anima.wire.humanoid`, :mod:`anima.humanoid.spec`), so ``/openapi.json`` and ``/docs`` show
what is accepted; the parsers stay the one validator (a body is never checked twice).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from anima.humanoid import spec
from anima.wire import payloads
from anima.wire.humanoid import POSTURE_KEYS

Schema = dict[str, Any]  # an OpenAPI fragment, as FastAPI's openapi_extra takes it

# the whole string: payloads matches its locale pattern with fullmatch
LOCALE_PATTERN = f"^{payloads._LOCALE.pattern}$"


def body(properties: Mapping[str, Schema], required: list[str], example: Schema) -> Schema:
    """``openapi_extra`` for a route whose body is a JSON object of ``properties``."""
    schema: Schema = {
        "type": "object",
        "properties": dict(properties),
        "required": required,
        "additionalProperties": False,
    }
    content = {"application/json": {"schema": schema, "example": example}}
    return {"requestBody": {"required": True, "content": content}}


def _number(low: float, high: float, description: str) -> Schema:
    return {"type": "number", "minimum": low, "maximum": high, "description": description}


def _name(description: str, options: tuple[str, ...] = ()) -> Schema:
    field: Schema = {
        "type": "string",
        "minLength": 1,
        "maxLength": payloads.MAX_NAME,
        "description": description,
    }
    if options:
        field["enum"] = list(options)
    return field


SPEAK = body(
    {
        "text": {
            "type": "string",
            "minLength": 1,
            "maxLength": payloads.MAX_TEXT,
            "description": "what to say; gesture markers such as ^start(nod) allowed",
        },
        "locale": {
            "type": "string",
            "pattern": LOCALE_PATTERN,
            "default": payloads.DEFAULT_LOCALE,
        },
    },
    ["text"],
    {"text": "Hello ^start(nod) there", "locale": payloads.DEFAULT_LOCALE},
)
_REACH = payloads.MAX_COORD
LOOK_AT = body(
    {
        k: _number(-_REACH, _REACH, f"metres, head frame ({d}); not all three 0")
        for k, d in (("x", "forward"), ("y", "left"), ("z", "up"))
    },
    ["x", "y", "z"],
    {"x": 1.0, "y": 0.3, "z": 0.1},
)
ANIMATION = body(
    {"name": _name("a library animation (GET /api/animations), any case, or an alias")},
    ["name"],
    {"name": "nod"},
)
LOOK_AT_TARGET = body(
    {"name": _name("a gaze posture; LOOKUPPostureDefault clears the held one")},
    ["name"],
    {"name": "Posture_LookAtInterviewer"},
)


def _widest(key: str) -> tuple[float, float]:
    ranges = [gait[key] for gait in spec.SPEED.values()]
    return min(r.low for r in ranges), max(r.high for r in ranges)


def _posture(key: str) -> Schema:
    r = spec.POSTURE[f"stand_{key}"]
    return _number(r.low, r.high, f"{r.unit}, the stand posture's {key}")


def _speed(key: str, unit: str, what: str) -> Schema:
    low, high = _widest(f"{key}_speed")
    return _number(low, high, f"{unit}, {what} (the widest gait's range; Walk's is narrower)")


HUMANOID: dict[str, Schema] = {
    "mode": body(
        {"mode": _name("the FSM mode to switch to", spec.MODES)}, ["mode"], {"mode": "Start"}
    ),
    "motion": body(
        {"motion": _name("a stand motion", tuple(spec.MOTIONS))},
        ["motion"],
        {"motion": "Greeting"},
    ),
    "posture": body(
        {k: _posture(k) for k in POSTURE_KEYS},
        list(POSTURE_KEYS),
        {"pitch": 0.05, "roll": 0.0, "yaw": 0.1, "height": -0.05},
    ),
    "speed": body(
        {
            "x": _speed("x", "m/s", "forward"),
            "y": _speed("y", "m/s", "left"),
            "yaw": _speed("yaw", "rad/s", "turn"),
        },
        ["x", "y", "yaw"],
        {"x": 0.2, "y": 0.0, "yaw": 0.0},
    ),
}
