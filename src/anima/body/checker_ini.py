"""The ``checker.ini`` body definition: board wire facts, channels, calibrations, postures.

The format is documented in ``docs/body.md``. Every parse error names the file and line.
Sections::

    [body]      name, animations (the shipped animation set made for it; default nadine)
    [board]     port, baud, channels (the channel count)
    [safety]    max_speed (units/s default), lip_active_fraction
    [channels]  N = name default min max [role=R] [speed=U] [zero=U rad=R] [closed=U]
    [posture NAME]  channel_name = value   (one section per named posture)
    [camera]    mount, hfov_deg, position_m, rpy_deg (the body's own camera; optional)
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field, replace
from importlib import resources
from pathlib import Path

from anima.body.model import BoardInfo, Body, Calibration, Channel, Posture, Role
from anima.config.files import FileRefusedError, excerpt, read_regular_file, utf8_chunks
from anima.config.vision import (
    GEOMETRY_KEYS,
    MOUNTS,
    CameraGeometry,
    check_vector,
)
from anima.errors import BodyDefinitionError, ConfigError

DEFAULT_BODY = "nadine_checker.ini"
# the bodies that ship with anima, by the name body.checker_ini (or --body) may give instead
# of a path
SHIPPED_BODIES = {"nadine": DEFAULT_BODY, "reachy_mini": "reachy_mini.ini"}
_IDENTIFIER = re.compile(r"[a-z][a-z0-9_]{0,63}")
MAX_FILE_BYTES = 1024 * 1024  # a body definition is a few KB; this is far past any real one
MAX_CHANNELS = 255  # the serial packet's channel count is one byte (docs/serial-protocol.md)
MAX_BAUD = 12_000_000  # above the fastest USB serial adapters
MAX_NAME = 64  # characters in a channel or posture name
_INTEGER = re.compile(r"[+-]?[0-9]{1,12}")
_ROLES = {r.value: r for r in Role}
_CHANNEL_KEYS = ("role", "speed", "zero", "rad", "closed")
_CHANNELS_WHY = "the serial protocol addresses 1–255 channels"


@dataclass
class _Draft:
    name: str = ""
    animations: str = "nadine"
    port: str = ""
    baud: int = 115200
    count: int | None = None
    count_line: int = 0
    max_speed: float = 600.0
    lip_active_fraction: float = 0.15
    channels: dict[int, tuple[int, Channel]] = field(default_factory=dict)
    postures: dict[str, tuple[int, dict[str, tuple[int, float]]]] = field(default_factory=dict)
    camera: CameraGeometry | None = None  # [camera]: None when the body declares none
    camera_lines: dict[str, int] = field(default_factory=dict)  # [camera] key → its line


def default_body_path() -> Path:
    """The Nadine-like 28-channel definition shipped in the package."""
    return shipped_body_path("nadine")


def shipped_body_path(name: str) -> Path:
    """The shipped body ``name`` (one of :data:`SHIPPED_BODIES`)."""
    return Path(str(resources.files("anima.body") / "data" / SHIPPED_BODIES[name]))


def body_path(given: str | Path | None) -> Path:
    """Where the body is: a shipped body's name (``reachy_mini``), a file, or None (Nadine)."""
    if given is None:
        return default_body_path()
    path = Path(given)
    if str(given) in SHIPPED_BODIES and not path.exists():  # a file of that name comes first
        return shipped_body_path(str(given))
    return path


def load_body(path: str | Path | None = None) -> Body:
    """Parse a ``checker.ini`` file: a path, a shipped body's name (:data:`SHIPPED_BODIES`),
    or None for the shipped Nadine body."""
    p = body_path(path)
    try:
        text = "".join(utf8_chunks(read_regular_file(p, MAX_FILE_BYTES)))
    except FileRefusedError as exc:  # a FIFO, a device, too big, not UTF-8
        raise BodyDefinitionError(str(p), exc.line, exc.bare) from None
    except OSError as exc:
        raise BodyDefinitionError(str(p), None, f"cannot read: {exc.strerror or exc}") from None
    return parse_body(text, source=str(p))


def parse_body(text: str, source: str = "<string>") -> Body:
    """Parse ``checker.ini`` text; ``source`` names it in error messages."""
    draft = _Draft()
    section: str | None = None
    for lineno, raw in enumerate(text.splitlines(), start=1):
        line = _strip_comment(raw)
        if not line:
            continue
        if line.startswith("["):
            if not line.endswith("]"):
                raise BodyDefinitionError(
                    source, lineno, f"unterminated section header {excerpt(line)}"
                )
            section = line[1:-1].strip()
            if section.startswith("posture "):
                name = section[len("posture ") :].strip()
                if not name:
                    raise BodyDefinitionError(source, lineno, "posture section without a name")
                if len(name) > MAX_NAME:
                    raise BodyDefinitionError(
                        source, lineno, f"posture name longer than {MAX_NAME} characters"
                    )
                if name in draft.postures:
                    raise BodyDefinitionError(source, lineno, f"duplicate posture {name!r}")
                draft.postures[name] = (lineno, {})
            elif section not in ("body", "board", "safety", "channels", "camera"):
                raise BodyDefinitionError(source, lineno, f"unknown section {excerpt(section)}")
            continue
        if "=" not in line:
            raise BodyDefinitionError(
                source, lineno, f"expected 'key = value', got {excerpt(line)}"
            )
        key, value = (part.strip() for part in line.split("=", 1))
        if section is None:
            raise BodyDefinitionError(source, lineno, "entry before any [section]")
        if section == "body":
            _body_entry(draft, key, value, source, lineno)
        elif section == "board":
            _board_entry(draft, key, value, source, lineno)
        elif section == "safety":
            _safety_entry(draft, key, value, source, lineno)
        elif section == "channels":
            _channel_entry(draft, key, value, source, lineno)
        elif section == "camera":
            _camera_entry(draft, key, value, source, lineno)
        else:
            posture = draft.postures[section[len("posture ") :].strip()][1]
            if key in posture:
                raise BodyDefinitionError(
                    source, lineno, f"channel {excerpt(key)} set twice in posture"
                )
            posture[key] = (
                lineno,
                _number(value, f"posture value for {excerpt(key)}", source, lineno),
            )
    return _finish(draft, source)


def _strip_comment(raw: str) -> str:
    for marker in (";", "#"):
        cut = raw.find(marker)
        if cut >= 0:
            raw = raw[:cut]
    return raw.strip()


def _number(text: str, what: str, source: str, lineno: int) -> float:
    try:
        value = float(text)
    except ValueError:
        raise BodyDefinitionError(
            source, lineno, f"{what}: {excerpt(text)} is not a number"
        ) from None
    if not math.isfinite(value):
        raise BodyDefinitionError(source, lineno, f"{what}: {excerpt(text)} is not finite")
    return value


def _integer(text: str, what: str, source: str, lineno: int, *, lo: int, hi: int, why: str) -> int:
    """An integer in [lo, hi]; ``why`` explains the range in the refusal."""
    if _INTEGER.fullmatch(text) is None:  # also refuses 1e6 and 5000-digit numbers, quickly
        try:
            number = float(text)
        except ValueError:
            number = math.nan
        if math.isfinite(number) and number == int(number) and not lo <= number <= hi:
            raise BodyDefinitionError(
                source, lineno, f"{what} must be {lo}–{hi} ({why}), got {excerpt(text)}"
            )
        raise BodyDefinitionError(source, lineno, f"{what}: {excerpt(text)} is not an integer")
    value = int(text)
    if not lo <= value <= hi:
        raise BodyDefinitionError(source, lineno, f"{what} must be {lo}–{hi} ({why}), got {value}")
    return value


def _body_entry(draft: _Draft, key: str, value: str, source: str, lineno: int) -> None:
    if key not in ("name", "animations"):
        raise BodyDefinitionError(source, lineno, f"unknown [body] key {excerpt(key)}")
    if not _IDENTIFIER.fullmatch(value):
        raise BodyDefinitionError(
            source,
            lineno,
            f"[body] {key} must be a lower-case name (a-z, 0-9, _), got {excerpt(value)}",
        )
    setattr(draft, key, value)


def _board_entry(draft: _Draft, key: str, value: str, source: str, lineno: int) -> None:
    if key == "port":
        draft.port = value
    elif key == "baud":
        draft.baud = _integer(
            value, "baud", source, lineno, lo=1, hi=MAX_BAUD, why="bits per second"
        )
    elif key == "channels":
        draft.count = _integer(
            value, "channels", source, lineno, lo=1, hi=MAX_CHANNELS, why=_CHANNELS_WHY
        )
        draft.count_line = lineno
    else:
        raise BodyDefinitionError(source, lineno, f"unknown [board] key {excerpt(key)}")


def _safety_entry(draft: _Draft, key: str, value: str, source: str, lineno: int) -> None:
    if key == "max_speed":
        draft.max_speed = _number(value, "max_speed", source, lineno)
        if draft.max_speed <= 0:
            raise BodyDefinitionError(source, lineno, "max_speed must be > 0")
    elif key == "lip_active_fraction":
        draft.lip_active_fraction = _number(value, "lip_active_fraction", source, lineno)
        if not 0.0 < draft.lip_active_fraction < 1.0:
            raise BodyDefinitionError(source, lineno, "lip_active_fraction must be in (0, 1)")
    else:
        raise BodyDefinitionError(source, lineno, f"unknown [safety] key {excerpt(key)}")


def _camera_entry(draft: _Draft, key: str, value: str, source: str, lineno: int) -> None:
    """``mount = head``, ``hfov_deg = 81.4``, ``position_m = 0.0437 0 0.0512``, ``rpy_deg``;
    a key not given keeps :class:`CameraGeometry`'s default."""
    if key not in GEOMETRY_KEYS:
        known = ", ".join(GEOMETRY_KEYS)
        raise BodyDefinitionError(source, lineno, f"unknown [camera] key {excerpt(key)} ({known})")
    if key in draft.camera_lines:
        first = draft.camera_lines[key]
        raise BodyDefinitionError(source, lineno, f"[camera] {key} set twice (first: {first})")
    draft.camera_lines[key] = lineno
    camera = draft.camera or CameraGeometry()
    what = f"[camera] {key}"
    try:
        if key == "mount":
            if value not in MOUNTS:  # its own message: the value is cut short (excerpt)
                raise ConfigError(f"{what} must be head or fixed, got {excerpt(value)}")
            camera = replace(camera, mount=value)
        elif key == "hfov_deg":
            camera = replace(camera, hfov_deg=_number(value, what, source, lineno))
        else:
            v = tuple(_number(n, what, source, lineno) for n in value.replace(",", " ").split())
            check_vector(what, v, *((5.0, "m") if key == "position_m" else (180.0, "degrees")))
            xyz = (v[0], v[1], v[2])
            if key == "position_m":
                camera = replace(camera, position_m=xyz)
            else:
                camera = replace(camera, rpy_deg=xyz)
    except BodyDefinitionError:
        raise
    except ConfigError as exc:  # CameraGeometry's own checks (hfov_deg in [10, 180] …)
        raise BodyDefinitionError(source, lineno, str(exc)) from None
    draft.camera = camera


def _channel_entry(draft: _Draft, key: str, value: str, source: str, lineno: int) -> None:
    number = _integer(
        key, "channel number", source, lineno, lo=1, hi=MAX_CHANNELS, why=_CHANNELS_WHY
    )
    if number in draft.channels:
        first = draft.channels[number][0]
        raise BodyDefinitionError(
            source, lineno, f"channel {number} defined again (first: {first})"
        )
    fields = value.split()
    if len(fields) < 4:
        raise BodyDefinitionError(
            source,
            lineno,
            f"channel {number}: expected 'name default min max', got {excerpt(value)}",
        )
    name = fields[0]
    if len(name) > MAX_NAME:
        raise BodyDefinitionError(
            source, lineno, f"channel {number}: name longer than {MAX_NAME} characters"
        )
    default, lo, hi = (
        _number(f, f"channel {number} {label}", source, lineno)
        for f, label in zip(fields[1:4], ("default", "min", "max"), strict=True)
    )
    extras: dict[str, str] = {}
    for item in fields[4:]:
        k, sep, v = item.partition("=")
        if not sep or k not in _CHANNEL_KEYS:
            raise BodyDefinitionError(
                source,
                lineno,
                f"channel {number}: unknown option {excerpt(item)} "
                f"(options: {', '.join(_CHANNEL_KEYS)})",
            )
        extras[k] = v
    role = Role.OTHER
    if "role" in extras:
        try:
            role = _ROLES[extras["role"]]
        except KeyError:
            raise BodyDefinitionError(
                source,
                lineno,
                f"channel {number}: unknown role {excerpt(extras['role'])} "
                f"(roles: {', '.join(_ROLES)})",
            ) from None
    calibration = None
    if ("zero" in extras) != ("rad" in extras):
        raise BodyDefinitionError(source, lineno, f"channel {number}: zero= and rad= go together")
    try:
        if "zero" in extras:
            calibration = Calibration(
                zero=_number(extras["zero"], "zero", source, lineno),
                rad_per_unit=_number(extras["rad"], "rad", source, lineno),
            )
        channel = Channel(
            name=name,
            default=default,
            min=lo,
            max=hi,
            role=role,
            max_speed=_number(extras["speed"], "speed", source, lineno)
            if "speed" in extras
            else None,
            calibration=calibration,
            closed=_number(extras["closed"], "closed", source, lineno)
            if "closed" in extras
            else None,
        )
    except ConfigError as exc:
        if isinstance(exc, BodyDefinitionError):
            raise
        raise BodyDefinitionError(source, lineno, str(exc)) from None
    draft.channels[number] = (lineno, channel)


def _finish(draft: _Draft, source: str) -> Body:
    if not draft.channels:
        raise BodyDefinitionError(source, None, "no [channels] defined")
    count = draft.count if draft.count is not None else max(draft.channels)
    beyond = [n for n in draft.channels if n > count]
    if beyond:
        n = min(beyond)
        raise BodyDefinitionError(
            source, draft.channels[n][0], f"channel {n} is beyond the board's {count} channels"
        )
    missing = [n for n in range(1, count + 1) if n not in draft.channels]
    if missing:
        shown = ", ".join(map(str, missing[:8])) + (", …" if len(missing) > 8 else "")
        raise BodyDefinitionError(
            source,
            draft.count_line or None,
            f"{len(missing)} of the {count} channels are not defined: {shown}",
        )
    channels = tuple(draft.channels[n][1] for n in range(1, count + 1))
    names = {ch.name for ch in channels}
    postures: dict[str, Posture] = {}
    for pname, (_, entries) in draft.postures.items():
        for cname, (lineno, value) in entries.items():
            if cname not in names:
                raise BodyDefinitionError(
                    source, lineno, f"posture {pname!r}: unknown channel {excerpt(cname)}"
                )
            ch = next(c for c in channels if c.name == cname)
            if not ch.min <= value <= ch.max:
                raise BodyDefinitionError(
                    source,
                    lineno,
                    f"posture {pname!r}: {cname} = {value:g} is outside [{ch.min:g}, {ch.max:g}]",
                )
        postures[pname] = Posture(name=pname, values={k: v for k, (_, v) in entries.items()})
    postures.setdefault(
        "default", Posture(name="default", values={ch.name: ch.default for ch in channels})
    )
    try:
        return Body(
            channels=channels,
            postures=postures,
            default_max_speed=draft.max_speed,
            lip_active_fraction=draft.lip_active_fraction,
            board=BoardInfo(port=draft.port, baud=draft.baud),
            source=source,
            name=draft.name or Path(source).stem,
            animations=draft.animations,
            camera=draft.camera,
        )
    except BodyDefinitionError:
        raise
    except ConfigError as exc:
        raise BodyDefinitionError(source, None, str(exc)) from None
