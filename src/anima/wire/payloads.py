"""Parsing and validating what front doors receive, once, into typed commands.

MQTT, the REST API and the console use these same functions, so a payload is accepted or
refused with the same message whichever way it came. Every refusal is a :class:`PayloadError`
whose message says exactly what is wrong and quotes at most a short excerpt of the value.

The rules, the same at every door (docs/web.md lists them):

- a payload is at most :data:`MAX_PAYLOAD` bytes of UTF-8; a leading byte-order mark is dropped;
- a number is a JSON number that fits a finite float: ``true``, ``"1"``, ``NaN``, ``1e400`` and
  integers too large for a float (``float(10**400)`` raises ``OverflowError``) are refused;
- text to speak (or to ask) is at most :data:`MAX_TEXT` characters with no control character
  but tab, line feed and carriage return, and no lone surrogate (``"\\ud800"`` in JSON).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from typing import Protocol, TypeVar

from anima import commands as cmd
from anima.errors import InvalidCommandError
from anima.language import markup
from anima.language.text import MAX_SPEECH_TEXT, speech_problem
from anima.wire.jsontypes import JsonObject

MAX_PAYLOAD = 64 * 1024  # bytes; more is refused before decoding
# the commands' bounds (anima.commands checks them as a command is made), named for the doors
MAX_TEXT = MAX_SPEECH_TEXT  # characters of speech in one request
MAX_NAME = cmd.MAX_NAME  # characters of an animation name
MAX_COORD = cmd.MAX_COORD  # metres of a look-at point on each axis
DEFAULT_LOCALE = "en-US"
SHOWN = 40  # characters of a refused value quoted in a refusal
# matched with fullmatch: "$" would also match before a trailing newline ("en-US\n")
_LOCALE = re.compile(r"[a-z]{2,3}(-[A-Za-z]{2,4})?(-[A-Z]{2}|-\d{3})?")
BOM = "\ufeff"


class PayloadError(InvalidCommandError):
    """A payload that cannot become a command; the message is the reason."""


class Named(Protocol):
    """An animation as the parsers see it: its library name, and whether it is a posture."""

    @property
    def name(self) -> str: ...
    @property
    def is_posture(self) -> bool: ...


class AnimationNames(Protocol):
    """What the parsers ask of the animation library
    (:class:`~anima.animation.library.AnimationNames`, a floor above the wire): its names,
    a name as given resolved to its own (or refused with the closest), the animation it names."""

    def __contains__(self, name: object, /) -> bool: ...
    def names(self) -> list[str]: ...
    def resolve(self, name: str) -> str: ...
    def get(self, name: str) -> Named: ...


def excerpt(raw: bytes | str, limit: int = 120) -> str:
    """A short, printable excerpt of a payload for error reports."""
    text = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else raw
    text = text.replace("\n", "\\n")
    return text if len(text) <= limit else text[:limit] + "…"


def shown(value: object, limit: int = SHOWN) -> str:
    """A parsed value as a refusal quotes it: JSON-like, cut to about ``limit`` characters.

    A huge integer shows its first digits and its length (``1234567890…(400 digits)``); a float
    too large for JSON (``1e400``) shows the literal it was written as.
    """
    if isinstance(value, _OutOfRange):
        text = value.literal
    elif isinstance(value, int) and not isinstance(value, bool):
        if value.bit_length() > 13_000:  # str() refuses more than 4300 digits
            return "an integer of more than 3900 digits"
        digits = str(abs(value))
        if len(digits) > 20:
            sign = "-" if value < 0 else ""
            return f"{sign}{digits[:10]}…({len(digits)} digits)"
        text = str(value)
    else:
        try:
            text = json.dumps(value, ensure_ascii=True, default=repr)
        except (RecursionError, ValueError):
            text = f"a {type(value).__name__}"
    return text if len(text) <= limit else text[:limit] + "…"


class _OutOfRange(float):
    """A JSON number too large for a float (``1e400``): infinite, remembering how it was written."""

    literal: str

    def __new__(cls, literal: str) -> _OutOfRange:
        self = super().__new__(cls, literal)
        self.literal = literal
        return self


def _parse_float(literal: str) -> float:
    value = float(literal)
    return value if math.isfinite(value) else _OutOfRange(literal)


def number(value: object, key: str) -> float:
    """A parsed JSON value as a finite float, or a refusal naming ``key`` and the value.

    The one number rule of every front door: bools and non-numbers are refused, and so are
    NaN, infinities and integers beyond a float's range.
    """
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise PayloadError(f"{key!r} must be a number, got {shown(value)}")
    try:
        f = float(value)
    except OverflowError:  # float(int) of more than ~308 digits
        f = math.inf
    if not math.isfinite(f):
        raise PayloadError(f"{key!r} must be finite, got {shown(value)}")
    return f


def number_text(word: str, key: str) -> float:
    """A number typed as text (the console's ``look 1 0.2 0``), by the same rule as JSON's."""
    try:
        value = float(word)
    except ValueError:
        raise PayloadError(f"{key!r} must be a number, got {excerpt(word, SHOWN)!r}") from None
    if not math.isfinite(value):
        raise PayloadError(f"{key!r} must be finite, got {excerpt(word, SHOWN)!r}")
    return value


def speech_text(text: str, key: str = "text", limit: int = MAX_TEXT) -> str:
    """``text`` checked as something to say: bounded, no control character, no lone surrogate
    (:func:`anima.language.text.speech_problem`, the rule :class:`~anima.commands.Speak`
    applies)."""
    problem = speech_problem(text, key, limit)
    if problem is not None:
        raise PayloadError(problem)
    return text


_C = TypeVar("_C", bound=cmd.Command)


def _made(make: Callable[[], _C]) -> _C:
    """The command ``make`` builds; a refusal of its own checks as the doors' PayloadError."""
    try:
        return make()
    except PayloadError:
        raise
    except InvalidCommandError as exc:
        raise PayloadError(str(exc)) from None


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
    # a byte-order mark (Windows editors, some HTTP clients) is not part of the text: without
    # this, '\ufeff{"text": …}' would not start with "{" and be spoken as JSON
    text = text.removeprefix(BOM).strip()
    if not text:
        raise PayloadError("empty payload")
    if "\x00" in text:
        raise PayloadError("payload contains a NUL character")
    return text


def json_object(text: str, keys: set[str], required: set[str]) -> JsonObject:
    try:
        data = json.loads(text, parse_float=_parse_float)
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
        name = unknown[0] if len(unknown[0]) <= SHOWN else unknown[0][:SHOWN] + "…"
        raise PayloadError(f"unknown field {name!r} (fields: {', '.join(sorted(keys))})")
    return require(data, required)


def require(data: JsonObject, required: set[str]) -> JsonObject:
    """``data`` when it has every field in ``required``; else a refusal naming the first."""
    missing = sorted(required - set(data))
    if missing:
        raise PayloadError(f"missing field {missing[0]!r}")
    return data


def parse_speak(raw: bytes | str, library: AnimationNames | None = None) -> cmd.Speak:
    """Plain text (``en-US``) or ``{"text": ..., "locale": ...}``; with ``library``, the
    text's gesture markers (``^start(nod)``, docs/speech.md) are checked against it, so a bad
    one is refused here like an unknown animation name."""
    text = decode(raw)
    locale = DEFAULT_LOCALE
    if text.startswith("{"):
        data = json_object(text, {"text", "locale"}, {"text"})
        if not isinstance(data["text"], str):
            raise PayloadError(f"'text' must be a string, got {shown(data['text'])}")
        text = data["text"].strip()
        loc = data.get("locale", DEFAULT_LOCALE)
        if not isinstance(loc, str) or not _LOCALE.fullmatch(loc):
            raise PayloadError(f"'locale' must look like 'en-US', got {shown(loc)}")
        locale = loc
        if not text:
            raise PayloadError("'text' is empty")
    # checked as it is made (text_problem, the length, the markers' form): its markup read once
    command = _made(lambda: cmd.Speak(text=text, locale=locale))
    if library is not None and command.script.markers:
        # the names checked here, as an unknown animation is: the door refuses, not the queue
        markup.named(command.script, library.__contains__, library.names())
    return command


def parse_stop_speak(raw: bytes | str) -> cmd.StopSpeaking:
    """Any (or no) payload: interrupt the current utterance."""
    if isinstance(raw, bytes) and len(raw) > MAX_PAYLOAD:
        raise PayloadError(f"payload of {len(raw)} bytes exceeds the {MAX_PAYLOAD}-byte limit")
    return cmd.StopSpeaking()


def parse_look_at(raw: bytes | str) -> cmd.LookAt:
    """``{"x": float, "y": float, "z": float}``, metres in the head frame (each within
    :data:`MAX_COORD`: :class:`~anima.commands.LookAt` checks it)."""
    text = decode(raw)
    axes = ("x", "y", "z")
    data = json_object(text, set(axes), set())
    # a wrong value first: {"x": "left"} is "'x' must be a number", not "missing field 'y'"
    given = {k: number(data[k], k) for k in axes if k in data}
    require(data, set(axes))
    x, y, z = (given[k] for k in axes)
    command = _made(lambda: cmd.LookAt(x=x, y=y, z=z))
    if x == 0.0 and y == 0.0 and z == 0.0:
        raise PayloadError("(0, 0, 0) is the eyes themselves: no direction to look")
    return command


def checked_name(raw: bytes | str) -> str:
    """A name payload: size-checked, printable (an animation, a mode, a motion)."""
    name = decode(raw)
    if len(name) > MAX_NAME:
        raise PayloadError(f"name of {len(name)} characters exceeds the {MAX_NAME} limit")
    if any(not c.isprintable() for c in name):
        raise PayloadError("name contains control characters")
    return name


def name_field(raw: bytes | str, key: str) -> str:
    """A bare name, or ``{key: "name"}``: the checked name (REST bodies, humanoid payloads)."""
    text = decode(raw)
    if not text.startswith("{"):
        return checked_name(text)
    value = json_object(text, {key}, {key})[key]
    if not isinstance(value, str) or not value.strip():
        raise PayloadError(f"{key!r} must be a non-empty string, got {shown(value)}")
    return checked_name(value)


def parse_animation(raw: bytes | str, library: AnimationNames) -> cmd.PlayAnimation:
    """An ``<animation_name>`` from the library, in any case or by an alias (``wave``): the
    command carries the library's own name (``LOOKUP_Waving``)."""
    name = checked_name(raw)
    return cmd.PlayAnimation(name=library.resolve(name))  # UnknownAnimationError: did you mean


def parse_look_at_target(raw: bytes | str, library: AnimationNames) -> cmd.LookAtTarget:
    """A posture ``<animation_name>`` (or its alias: ``look at me``); the default posture
    clears the latch."""
    name = checked_name(raw)
    posture = library.get(name)
    if not posture.is_posture:
        raise PayloadError(f"{name!r} is a gesture, not a posture")
    return cmd.LookAtTarget(name=posture.name)


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


def parse_cancel_animation(raw: bytes | str, library: AnimationNames) -> cmd.CancelAnimation:
    """An ``<animation_name>`` (or its alias): end that animation only — its oldest queued or
    running play — and leave every other move alone (an SDK handle's ``cancel()``)."""
    return cmd.CancelAnimation(name=library.resolve(checked_name(raw)))


def parse_listen(raw: bytes | str) -> cmd.Listen:
    """Any (or no) payload: wake the agent."""
    if isinstance(raw, bytes) and len(raw) > MAX_PAYLOAD:
        raise PayloadError(f"payload of {len(raw)} bytes exceeds the {MAX_PAYLOAD}-byte limit")
    return cmd.Listen()


def parse_ask(raw: bytes | str) -> cmd.Ask:
    """Plain text: a request for the agent, as if heard."""
    text = decode(raw)
    return _made(lambda: cmd.Ask(text=text))  # bounded as text to say (key "request")


Parser = Callable[[bytes | str], cmd.Command]


def control_parsers(library: AnimationNames) -> dict[str, Parser]:
    """The Nadine control topics' parsers, by topic leaf."""
    return {
        "speak": lambda raw: parse_speak(raw, library),
        "stop_speak": parse_stop_speak,
        "look_at": parse_look_at,
        "look_at_target": lambda raw: parse_look_at_target(raw, library),
        "animation": lambda raw: parse_animation(raw, library),
        "listen": parse_listen,
        "ask": parse_ask,
        "estop": parse_estop,
        "reset": parse_reset,
        "stop_animation": parse_stop_animation,
        "cancel_animation": lambda raw: parse_cancel_animation(raw, library),
    }
