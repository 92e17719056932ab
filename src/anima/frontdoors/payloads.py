"""Parsing and validating what front doors receive, once, into typed commands.

MQTT and the REST API use these same functions, so a payload is accepted or refused with the
same message whichever way it came. Every refusal is a :class:`PayloadError` whose message says
exactly what is wrong.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from typing import Any

from anima import commands as cmd
from anima.animation.library import AnimationLibrary
from anima.errors import InvalidCommandError

MAX_PAYLOAD = 64 * 1024  # bytes; more is refused before decoding
MAX_TEXT = 2000  # characters of speech in one request
MAX_NAME = 200  # characters of an animation name
MAX_COORD = 100.0  # metres: farther look-at points are surely a unit mistake
DEFAULT_LOCALE = "en-US"
_LOCALE = re.compile(r"^[a-z]{2,3}(-[A-Za-z]{2,4})?(-[A-Z]{2}|-\d{3})?$")


class PayloadError(InvalidCommandError):
    """A payload that cannot become a command; the message is the reason."""


def excerpt(raw: bytes | str, limit: int = 120) -> str:
    """A short, printable excerpt of a payload for error reports."""
    text = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else raw
    text = text.replace("\n", "\\n")
    return text if len(text) <= limit else text[:limit] + "…"


def decode(raw: bytes | str) -> str:
    """Size-checked, UTF-8, stripped text; an empty payload is an error."""
    if isinstance(raw, bytes):
        if len(raw) > MAX_PAYLOAD:
            raise PayloadError(f"payload of {len(raw)} bytes exceeds the {MAX_PAYLOAD}-byte limit")
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise PayloadError(f"payload is not UTF-8 text (byte {exc.start})") from None
    else:
        text = raw
        if len(text.encode("utf-8", "replace")) > MAX_PAYLOAD:
            raise PayloadError(f"payload exceeds the {MAX_PAYLOAD}-byte limit")
    text = text.strip()
    if not text:
        raise PayloadError("empty payload")
    if "\x00" in text:
        raise PayloadError("payload contains a NUL character")
    return text


def json_object(text: str, keys: set[str], required: set[str]) -> dict[str, Any]:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise PayloadError(f"invalid JSON: {exc.msg} at character {exc.pos}") from None
    except RecursionError:  # e.g. 60,000 nested brackets: fits in the size limit
        raise PayloadError("invalid JSON: nested too deeply") from None
    except ValueError as exc:  # an integer of more than 4300 digits
        raise PayloadError(f"invalid JSON: {str(exc).split(';')[0]}") from None
    if not isinstance(data, dict):
        raise PayloadError(f"expected a JSON object, got {type(data).__name__}")
    unknown = sorted(set(data) - keys)
    if unknown:
        raise PayloadError(f"unknown field {unknown[0]!r} (fields: {', '.join(sorted(keys))})")
    missing = sorted(required - set(data))
    if missing:
        raise PayloadError(f"missing field {missing[0]!r}")
    return data


def parse_speak(raw: bytes | str) -> cmd.Speak:
    """Plain text (``en-US``) or ``{"text": ..., "locale": ...}``."""
    text = decode(raw)
    locale = DEFAULT_LOCALE
    if text.startswith("{"):
        data = json_object(text, {"text", "locale"}, {"text"})
        if not isinstance(data["text"], str):
            raise PayloadError("'text' must be a string")
        text = data["text"].strip()
        loc = data.get("locale", DEFAULT_LOCALE)
        if not isinstance(loc, str) or not _LOCALE.match(loc):
            raise PayloadError(f"'locale' must look like 'en-US', got {loc!r}")
        locale = loc
        if not text:
            raise PayloadError("'text' is empty")
    if len(text) > MAX_TEXT:
        raise PayloadError(f"text of {len(text)} characters exceeds the {MAX_TEXT} limit")
    return cmd.Speak(text=text, locale=locale)


def parse_stop_speak(raw: bytes | str) -> cmd.StopSpeaking:
    """Any (or no) payload: interrupt the current utterance."""
    if isinstance(raw, bytes) and len(raw) > MAX_PAYLOAD:
        raise PayloadError(f"payload of {len(raw)} bytes exceeds the {MAX_PAYLOAD}-byte limit")
    return cmd.StopSpeaking()


def _number(data: dict[str, Any], key: str) -> float:
    v = data[key]
    if isinstance(v, bool) or not isinstance(v, int | float):
        raise PayloadError(f"{key!r} must be a number, got {json.dumps(v)}")
    f = float(v)
    if not math.isfinite(f):
        raise PayloadError(f"{key!r} must be finite")
    if abs(f) > MAX_COORD:
        raise PayloadError(f"{key!r} = {f:g} m is farther than {MAX_COORD:g} m")
    return f


def parse_look_at(raw: bytes | str) -> cmd.LookAt:
    """``{"x": float, "y": float, "z": float}``, metres in the head frame."""
    text = decode(raw)
    # JSON allows NaN/Infinity literals in Python's parser: refuse them as non-finite below
    data = json_object(text, {"x", "y", "z"}, {"x", "y", "z"})
    x, y, z = (_number(data, k) for k in ("x", "y", "z"))
    if x == 0.0 and y == 0.0 and z == 0.0:
        raise PayloadError("(0, 0, 0) is the eyes themselves: no direction to look")
    return cmd.LookAt(x=x, y=y, z=z)


def checked_name(raw: bytes | str) -> str:
    """A name payload: size-checked, printable (an animation, a mode, a motion)."""
    name = decode(raw)
    if len(name) > MAX_NAME:
        raise PayloadError(f"name of {len(name)} characters exceeds the {MAX_NAME} limit")
    if any(not c.isprintable() for c in name):
        raise PayloadError("name contains control characters")
    return name


def parse_animation(raw: bytes | str, library: AnimationLibrary) -> cmd.PlayAnimation:
    """An ``<animation_name>`` from the library."""
    name = checked_name(raw)
    library.get(name)  # UnknownAnimationError with suggestions
    return cmd.PlayAnimation(name=name)


def parse_look_at_target(raw: bytes | str, library: AnimationLibrary) -> cmd.LookAtTarget:
    """A posture ``<animation_name>``; the default posture clears the latch."""
    name = checked_name(raw)
    if not library.get(name).is_posture:
        raise PayloadError(f"{name!r} is a gesture, not a posture")
    return cmd.LookAtTarget(name=name)


def _any(raw: bytes | str) -> None:
    if isinstance(raw, bytes) and len(raw) > MAX_PAYLOAD:
        raise PayloadError(f"payload of {len(raw)} bytes exceeds the {MAX_PAYLOAD}-byte limit")


def parse_estop(raw: bytes | str) -> cmd.EmergencyStop:
    """Any (or no) payload: hold still and refuse moves until ``reset``."""
    _any(raw)
    return cmd.EmergencyStop()


def parse_reset(raw: bytes | str) -> cmd.ResetEmergencyStop:
    """Any (or no) payload: release the emergency stop."""
    _any(raw)
    return cmd.ResetEmergencyStop()


def parse_stop_animation(raw: bytes | str) -> cmd.StopAnimation:
    """Any (or no) payload: drop queued moves, decelerate the running one to a hold."""
    _any(raw)
    return cmd.StopAnimation()


def parse_listen(raw: bytes | str) -> cmd.Listen:
    """Any (or no) payload: wake the agent."""
    if isinstance(raw, bytes) and len(raw) > MAX_PAYLOAD:
        raise PayloadError(f"payload of {len(raw)} bytes exceeds the {MAX_PAYLOAD}-byte limit")
    return cmd.Listen()


def parse_ask(raw: bytes | str) -> cmd.Ask:
    """Plain text: a request for the agent, as if heard."""
    text = decode(raw)
    if len(text) > MAX_TEXT:
        raise PayloadError(f"request of {len(text)} characters exceeds the {MAX_TEXT} limit")
    return cmd.Ask(text=text)


Parser = Callable[[bytes | str], cmd.Command]


def control_parsers(library: AnimationLibrary) -> dict[str, Parser]:
    """The Nadine control topics' parsers, by topic leaf."""
    return {
        "speak": parse_speak,
        "stop_speak": parse_stop_speak,
        "look_at": parse_look_at,
        "look_at_target": lambda raw: parse_look_at_target(raw, library),
        "animation": lambda raw: parse_animation(raw, library),
        "listen": parse_listen,
        "ask": parse_ask,
        "estop": parse_estop,
        "reset": parse_reset,
        "stop_animation": parse_stop_animation,
    }
