"""Loading the configuration: defaults, then a YAML file, then ``ANIMA_*`` variables
(:mod:`anima.config.env`).

Every failure is one :class:`~anima.errors.ConfigError` line that says where the value came
from (``anima.yaml:12`` or ``environment ANIMA_WEB__PORT``), which key, and a short excerpt of
the value: never a traceback, never an unbounded message.
"""

from __future__ import annotations

import dataclasses
import enum
import logging
import math
import os
import re
import types
import typing
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Literal, TypeVar, Union

from anima.config.env import EnvValue, from_env, merge_env, origin_of
from anima.config.files import FileRefusedError, excerpt, read_text
from anima.config.planner import MOVED_KEYS, PLANNER_CONFIGS
from anima.config.sections import AnimaConfig
from anima.config.yaml_text import load_scalar_or_yaml, load_yaml
from anima.errors import ConfigError

T = TypeVar("T")
log = logging.getLogger(__name__)
MAX_FILE_BYTES = 1024 * 1024  # a config file is a few KB; this is far past any real one
# YAML 1.1 (PyYAML) reads 1e3 and 1e-50 as strings: its float needs a dot. For a float field,
# a string that is a number in YAML 1.2's sense is that number.
_FLOAT = re.compile(r"[-+]?(\.[0-9]+|[0-9][0-9_]*(\.[0-9_]*)?)([eE][-+]?[0-9]+)?")


def load_config(
    path: str | Path | None = None,
    env: Mapping[str, str] | None = None,
    *,
    types: Mapping[str, str | None] | None = None,
) -> AnimaConfig:
    """Defaults, then the YAML file (if any), then ``ANIMA_*`` environment variables; then
    ``types``, a tagged section's type chosen on the command line (``anima serve --driver
    reachy_mini``, ``--humanoid sim``), before anything is checked: the file's and the
    environment's settings that type takes stay (``ANIMA_DRIVER__HOST``,
    ``ANIMA_HUMANOID__SIM_PORT``), another type's are dropped with a warning naming their line."""
    data: dict[str, Any] = {}
    source = "defaults"
    origins: dict[str, str] = {}
    if path is not None:
        p = Path(path)
        try:
            text = read_text(p, MAX_FILE_BYTES)
        except FileRefusedError as exc:  # a FIFO, a device, too big, not UTF-8
            where = p if exc.line is None else f"{p}:{exc.line}"
            raise ConfigError(f"{where}: {exc.bare}") from None
        except OSError as exc:
            raise ConfigError(f"{p}: cannot read config: {exc.strerror or exc}") from None
        loaded, lines = load_yaml(text, str(p))
        if loaded is not None and not isinstance(loaded, dict):
            raise ConfigError(f"{p}: the top level must be a mapping, got {excerpt(loaded)}")
        data = loaded or {}
        source = str(p)
        origins = {key: f"{p}:{line}" for key, line in lines.items()}
    merge_env(data, os.environ if env is None else env, origins)
    _move_planner_keys(data, origins)
    for section, tag in (types or {}).items():
        if tag is not None:
            _choose_type(data, section, tag, origins, source)
    return from_dict(AnimaConfig, data, source, origins=origins)


def _choose_type(
    data: dict[str, Any], section: str, tag: str, origins: dict[str, str], source: str
) -> None:
    raw = data.get(section)
    if isinstance(raw, EnvValue):  # ANIMA_HUMANOID=sim, or the whole section as YAML
        raw = load_scalar_or_yaml(raw.raw, f"environment {raw.name}")
    if isinstance(raw, str) or raw is None:
        data[section] = {"type": tag}  # a type's name alone (or nothing): now this one's
        origins[f"{section}.type"] = "command line"
        return
    if not isinstance(raw, dict):
        return  # not a mapping: checked, and refused, as the file's
    by_tag = _types_of(section)
    if tag in by_tag:  # a tagged section (driver): another type's settings may be there
        before = raw.get("type", next(iter(by_tag)))
        if (before.raw if isinstance(before, EnvValue) else before) != tag:
            # the file's settings were another type's: those the command line's takes stay

            def where(key: str) -> str:
                return origin_of(origins, key, source)

            fitting = _fitting(by_tag[tag], section, tag, raw, where)
            raw = {name: value for name, value in raw.items() if name in fitting}
    # else one class for every type (humanoid: all its settings stay, checked as the file's),
    # or an unknown type, refused by name when the section is checked
    data[section] = {**raw, "type": tag}
    origins[f"{section}.type"] = "command line"


def _types_of(section: str) -> dict[str, Any]:
    """A tagged section's dataclass for each of its types (``driver``: sim, serial, …), the
    first the default; empty for a section that is one dataclass (``humanoid``)."""
    hint = typing.get_type_hints(AnimaConfig)[section]
    return {_tag(m): m for m in typing.get_args(hint) if dataclasses.is_dataclass(m)}


def _fitting(
    cls: Any, section: str, tag: str, settings: Mapping[str, Any], where: Callable[[str], str]
) -> dict[str, Any]:
    """Of ``settings`` (another type's), those type ``tag``'s section ``cls`` has too and takes
    as they are (the serial board's ``port`` is a device, the Reachy daemon's a number); the
    others are dropped, each with a warning naming where it came from (``where(key)``)."""
    hints = typing.get_type_hints(cls)
    kept: dict[str, Any] = {}
    for name, value in settings.items():
        if name == "type":
            continue
        key = f"{section}.{name}"
        if name not in hints:
            log.warning(
                "%s: %s is not a setting of %s.type %s (the command line's): ignored",
                where(key), key, section, tag,
            )  # fmt: skip
            continue
        try:
            _coerce(hints[name], value, "", key, {})
        except ConfigError:
            log.warning(
                "%s: %s %s does not fit %s.type %s (the command line's): ignored",
                where(key), key, excerpt(value), section, tag,
            )  # fmt: skip
            continue
        kept[name] = value
    return kept


def _move_planner_keys(data: dict[str, Any], origins: dict[str, str]) -> None:
    """The flat ``agent.base_url``, ``agent.model``, … of before → ``agent.planner.…``, with a
    warning naming the new key; a key the chosen planner has no use for is dropped, said so."""
    agent = data.get("agent")
    if not isinstance(agent, dict):
        return
    moved = [k for k in MOVED_KEYS if k in agent]
    if not moved:
        return
    planner = agent.get("planner", "rules")
    if isinstance(planner, EnvValue):
        planner = load_scalar_or_yaml(planner.raw, f"environment {planner.name}")
    if isinstance(planner, str):
        planner = {"type": planner}
    if not isinstance(planner, dict):
        return  # not a section: from_dict says so
    tag = planner.get("type", "rules")
    tag = tag.raw if isinstance(tag, EnvValue) else tag
    own = PLANNER_CONFIGS.get(tag) if isinstance(tag, str) else None
    names = {f.name for f in dataclasses.fields(own)} if own is not None else set()
    for old in moved:
        new = MOVED_KEYS[old]
        value = agent.pop(old)
        where = origins.pop(f"agent.{old}", "config")
        if own is not None and new not in names:
            log.warning("%s: agent.%s is not a setting of the %s planner: ignored", where, old, tag)
            continue
        log.warning("%s: agent.%s is now agent.planner.%s", where, old, new)
        planner.setdefault(new, value)  # the new key, when both are given, wins
        origins.setdefault(f"agent.planner.{new}", where)
    agent["planner"] = planner


def with_changes(
    config: AnimaConfig,
    section: str,
    changes: Mapping[str, object],
    source: str = "command line",
) -> AnimaConfig:
    """``config`` with ``changes`` (those not None) made to ``section``, checked as the file's
    values are: ``anima serve --driver serial --port …`` makes the serial section, and
    ``--port`` alone on the simulated robot is refused by name. A ``type`` changed keeps the
    settings made that the new type takes too (``humanoid.sim_port`` through ``--humanoid
    sim``); another type's are dropped, said so."""
    given = {k: v for k, v in changes.items() if v is not None}
    if not given:
        return config
    current = getattr(config, section)
    data: dict[str, Any] = dataclasses.asdict(current)
    if "type" in given and given["type"] != data.get("type"):
        tag = str(given["type"])
        by_tag = _types_of(section)
        if by_tag:  # another type's class: the settings made (not defaults) that it takes
            defaults = dataclasses.asdict(type(current)())
            made = {k: v for k, v in data.items() if v != defaults.get(k)}
            data = _fitting(by_tag[tag], section, tag, made, _config) if tag in by_tag else {}
        # else one class for every type (humanoid): its settings all stay
    hint = typing.get_type_hints(AnimaConfig)[section]
    made = _coerce(hint, {**data, **given}, source, section, {})
    return dataclasses.replace(config, **{section: made})


def _config(_key: str) -> str:
    return "config"


def from_dict(
    cls: type[T],
    data: Mapping[str, Any],
    source: str = "config",
    prefix: str = "",
    origins: Mapping[str, str] | None = None,
) -> T:
    """Build dataclass ``cls`` from plain data, checking keys and types; errors name the key.

    ``origins`` maps dotted keys to where their values came from (an environment variable),
    so an error names the variable rather than the file.
    """
    origins = origins or {}
    if not isinstance(data, Mapping):
        where = origin_of(origins, prefix.rstrip("."), source)
        raise ConfigError(
            f"{where}: {prefix.rstrip('.') or 'config'} must be a mapping, got {excerpt(data)}"
        )
    assert dataclasses.is_dataclass(cls)
    hints = typing.get_type_hints(cls)
    fields = {f.name: f for f in dataclasses.fields(cls) if f.init}
    unknown = sorted((k for k in data if k not in fields), key=str)
    if unknown:
        key = f"{prefix}{unknown[0]}"
        shown = key if len(key) <= 60 else key[:59] + "…"
        raise ConfigError(
            f"{origin_of(origins, key, source)}: unknown key {shown} "
            f"(known: {', '.join(sorted(fields))})"
        )
    kwargs = {
        name: _coerce(
            hints[name],
            value,
            origin_of(origins, f"{prefix}{name}", source),
            f"{prefix}{name}",
            origins,
        )
        for name, value in data.items()
    }
    try:
        return cls(**kwargs)
    except ConfigError as exc:
        where = _blame(exc, prefix, origins, source)
        raise ConfigError(f"{where}: {exc}", key=exc.key) from None


def _blame(exc: ConfigError, prefix: str, origins: Mapping[str, str], source: str) -> str:
    """Where a section's own check failed: the key it names (``exc.key``), else the keys its
    message names, else the variables that set something in the section, else the section's
    line in the file."""
    inside = {k: o for k, o in origins.items() if k.startswith(prefix)}
    if exc.key is not None and exc.key in inside:
        return inside[exc.key]
    message = str(exc)
    named = sorted((k for k in inside if re.search(rf"{re.escape(k)}\b", message)), key=len)
    if named:
        return inside[named[-1]]  # the most specific key the message names
    variables = sorted({o for o in inside.values() if o.startswith("environment ")})
    if variables:
        return ", ".join(variables[:3])
    return origin_of(origins, prefix.rstrip("."), source)


def _coerce(tp: Any, value: Any, source: str, key: str, origins: Mapping[str, str]) -> Any:
    if isinstance(value, EnvValue):
        value = from_env(tp, value)
    origin = typing.get_origin(tp)
    if origin in (Union, types.UnionType):
        args = typing.get_args(tp)
        if value is None and type(None) in args:
            return None
        inner = [a for a in args if a is not type(None)]
        if len(inner) > 1 and all(dataclasses.is_dataclass(a) for a in inner):
            return _tagged(inner, value, source, key, origins)
        for kind in inner[:-1]:  # scalars (vision.device: an index or a path): the first that fits
            try:
                return _coerce(kind, value, source, key, origins)
            except ConfigError:
                continue
        return _coerce(inner[-1], value, source, key, origins)
    if dataclasses.is_dataclass(tp) and isinstance(tp, type):
        return from_dict(tp, value, source, prefix=f"{key}.", origins=origins)
    if origin is tuple and typing.get_args(tp)[-1] is Ellipsis:
        if not isinstance(value, list | tuple):
            raise ConfigError(f"{source}: {key} must be a list, got {excerpt(value)}", key=key)
        item = typing.get_args(tp)[0]
        return tuple(_coerce(item, v, source, f"{key}[{i}]", origins) for i, v in enumerate(value))
    if origin is tuple:
        args = typing.get_args(tp)
        if not isinstance(value, list | tuple) or len(value) != len(args):
            raise ConfigError(
                f"{source}: {key} must be a list of {len(args)} values, got {excerpt(value)}"
            )
        return tuple(
            _coerce(a, v, source, f"{key}[{i}]", origins)
            for i, (a, v) in enumerate(zip(args, value, strict=True))
        )
    if isinstance(tp, type) and issubclass(tp, enum.StrEnum):
        return _choice(tuple(m.value for m in tp), value, source, key, tp)
    if origin is Literal:
        return _choice(typing.get_args(tp), value, source, key)
    if tp is bool:
        if not isinstance(value, bool):
            raise ConfigError(
                f"{source}: {key} must be true or false, got {excerpt(value)}", key=key
            )
        return value
    if tp is float:
        return _float(value, source, key)
    if tp is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise ConfigError(f"{source}: {key} must be an integer, got {excerpt(value)}", key=key)
        return value
    if tp is str:
        if not isinstance(value, str):
            raise ConfigError(f"{source}: {key} must be a string, got {excerpt(value)}", key=key)
        return value
    raise ConfigError(f"{source}: {key}: unsupported config type {tp!r}", key=key)


def _tag(cls: Any) -> str:
    """The ``type`` a section's dataclass stands for (its ``type: Literal["…"]`` default)."""
    tag = next(f.default for f in dataclasses.fields(cls) if f.name == "type")
    assert isinstance(tag, str)
    return tag


def _tagged(
    members: list[Any], value: Any, source: str, key: str, origins: Mapping[str, str]
) -> Any:
    """A section with one dataclass per ``type`` (``driver``): the one its ``type`` names
    (the first when none is given); a key of another type's is refused by name."""
    if isinstance(value, str):  # its type's name alone: that type with its defaults
        value = {"type": value}
    if not isinstance(value, Mapping):
        raise ConfigError(f"{source}: {key} must be a mapping, got {excerpt(value)}", key=key)
    by_tag = {_tag(m): m for m in members}
    tag_value = value.get("type", _tag(members[0]))
    if isinstance(tag_value, EnvValue):
        tag_value = tag_value.raw
    tag_key = f"{key}.type"
    tag = _choice(tuple(by_tag), tag_value, origin_of(origins, tag_key, source), tag_key)
    cls = by_tag[tag]
    own = {f.name for f in dataclasses.fields(cls)}
    for name in value:
        if name in own:
            continue
        others = [t for t, m in by_tag.items() if name in {f.name for f in dataclasses.fields(m)}]
        if others:
            where = origin_of(origins, f"{key}.{name}", source)
            which = " or ".join([", ".join(others[:-1]), others[-1]] if len(others) > 1 else others)
            raise ConfigError(
                f"{where}: {key}.{name} is a setting of {key}.type {which}, not of {tag}",
                key=f"{key}.{name}",
            )
    return from_dict(cls, {**value, "type": tag}, source, prefix=f"{key}.", origins=origins)


def _choice(choices: tuple[Any, ...], value: Any, source: str, key: str, make: Any = None) -> Any:
    """``value`` when it is one of ``choices`` (a StrEnum's member when ``make`` is one)."""
    if not isinstance(value, str) or value not in choices:
        shown = ", ".join(str(c) for c in choices)
        raise ConfigError(f"{source}: {key} must be one of {shown}, got {excerpt(value)}", key=key)
    return make(value) if make is not None else value


def _float(value: Any, source: str, key: str) -> float:
    if isinstance(value, str) and _FLOAT.fullmatch(value.strip()):
        value = float(value.replace("_", ""))  # 1e3, 1e-50: numbers, though YAML 1.1 says text
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ConfigError(f"{source}: {key} must be a number, got {excerpt(value)}", key=key)
    try:
        number = float(value)
    except OverflowError:  # an integer past 1.8e308
        raise ConfigError(
            f"{source}: {key} must be a number, got {excerpt(value)}", key=key
        ) from None
    if not math.isfinite(number):  # no setting means anything by nan or inf
        raise ConfigError(f"{source}: {key} must be a finite number, got {number}", key=key)
    return number
