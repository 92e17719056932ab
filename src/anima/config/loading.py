"""Loading the configuration: defaults, then a YAML file, then ``ANIMA_*`` variables."""

from __future__ import annotations

import dataclasses
import os
import types
import typing
from collections.abc import Mapping
from pathlib import Path
from typing import Any, TypeVar, Union

import yaml

from anima.config.sections import ENV_PREFIX, AnimaConfig
from anima.errors import ConfigError

T = TypeVar("T")


def load_config(
    path: str | Path | None = None, env: Mapping[str, str] | None = None
) -> AnimaConfig:
    """Defaults, then the YAML file (if any), then ``ANIMA_*`` environment variables."""
    data: dict[str, Any] = {}
    source = "defaults"
    if path is not None:
        p = Path(path)
        try:
            loaded = yaml.safe_load(p.read_text(encoding="utf-8"))
        except OSError as exc:
            raise ConfigError(f"{p}: cannot read config: {exc.strerror or exc}") from exc
        except yaml.YAMLError as exc:
            raise ConfigError(f"{p}: invalid YAML: {exc}") from exc
        if loaded is not None and not isinstance(loaded, dict):
            raise ConfigError(f"{p}: the top level must be a mapping")
        data = loaded or {}
        source = str(p)
    origins = _merge_env(data, os.environ if env is None else env)
    return from_dict(AnimaConfig, data, source, origins=origins)


def _merge_env(data: dict[str, Any], env: Mapping[str, str]) -> dict[str, str]:
    """Merge ``ANIMA_*`` variables into ``data``; returns dotted key → variable name."""
    origins: dict[str, str] = {}
    for name, raw in env.items():
        if not name.startswith(ENV_PREFIX) or name == "ANIMA_CONFIG":
            continue
        keys = [k.lower() for k in name[len(ENV_PREFIX) :].split("__")]
        try:
            value = yaml.safe_load(raw)
        except yaml.YAMLError:
            value = raw
        node = data
        for key in keys[:-1]:
            child = node.setdefault(key, {})
            if not isinstance(child, dict):
                raise ConfigError(f"environment {name}: {key} is not a section")
            node = child
        node[keys[-1]] = value
        origins[".".join(keys)] = f"environment {name}"
    return origins


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
        where = origins.get(prefix.rstrip("."), source)
        raise ConfigError(f"{where}: {prefix or 'config'} must be a mapping, got {data!r}")
    assert dataclasses.is_dataclass(cls)
    hints = typing.get_type_hints(cls)
    fields = {f.name: f for f in dataclasses.fields(cls) if f.init}
    unknown = sorted(set(data) - set(fields))
    if unknown:
        key = f"{prefix}{unknown[0]}"
        raise ConfigError(
            f"{origins.get(key, source)}: unknown key {key} (known: {', '.join(sorted(fields))})"
        )
    kwargs = {
        name: _coerce(
            hints[name], value, origins.get(f"{prefix}{name}", source), f"{prefix}{name}", origins
        )
        for name, value in data.items()
    }
    try:
        return cls(**kwargs)
    except ConfigError as exc:
        # a section's own check names its key in the message: find where that key came from
        blamed = next(
            (o for k, o in origins.items() if k.startswith(prefix) and k in str(exc)), source
        )
        raise ConfigError(f"{blamed}: {exc}") from None


def _coerce(tp: Any, value: Any, source: str, key: str, origins: Mapping[str, str]) -> Any:
    origin = typing.get_origin(tp)
    if origin in (Union, types.UnionType):
        args = typing.get_args(tp)
        if value is None and type(None) in args:
            return None
        inner = [a for a in args if a is not type(None)]
        return _coerce(inner[0], value, source, key, origins)
    if dataclasses.is_dataclass(tp) and isinstance(tp, type):
        return from_dict(tp, value, source, prefix=f"{key}.", origins=origins)
    if origin is tuple and typing.get_args(tp)[-1] is Ellipsis:
        if not isinstance(value, list | tuple):
            raise ConfigError(f"{source}: {key} must be a list, got {value!r}")
        item = typing.get_args(tp)[0]
        return tuple(_coerce(item, v, source, f"{key}[{i}]", origins) for i, v in enumerate(value))
    if origin is tuple:
        args = typing.get_args(tp)
        if not isinstance(value, list | tuple) or len(value) != len(args):
            raise ConfigError(
                f"{source}: {key} must be a list of {len(args)} values, got {value!r}"
            )
        return tuple(
            _coerce(a, v, source, f"{key}[{i}]", origins)
            for i, (a, v) in enumerate(zip(args, value, strict=True))
        )
    if tp is bool:
        if not isinstance(value, bool):
            raise ConfigError(f"{source}: {key} must be true or false, got {value!r}")
        return value
    if tp is float:
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ConfigError(f"{source}: {key} must be a number, got {value!r}")
        return float(value)
    if tp is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise ConfigError(f"{source}: {key} must be an integer, got {value!r}")
        return value
    if tp is str:
        if not isinstance(value, str):
            raise ConfigError(f"{source}: {key} must be a string, got {value!r}")
        return value
    raise ConfigError(f"{source}: {key}: unsupported config type {tp!r}")
