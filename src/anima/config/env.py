"""The ``ANIMA_*`` environment's part of the configuration, and where each value came from.

:func:`merge_env` lays ``ANIMA_<SECTION>__<KEY>`` variables over what the file gave, each
value kept as text (:class:`EnvValue`) until its field's type is known; ``origins`` learns for
each dotted key the file line or variable it came from, which :func:`origin_of` reads for the
one-line errors (``environment ANIMA_WEB__PORT: web.port must be …``).
"""

from __future__ import annotations

import dataclasses
import enum
import logging
import re
import types
import typing
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, Union

from anima.config.bounds import ENV_PREFIX
from anima.config.sections import AnimaConfig
from anima.config.yaml_text import load_scalar_or_yaml
from anima.errors import ConfigError

log = logging.getLogger("anima.config.loading")
_NULLS = ("", "~", "null", "Null", "NULL")


@dataclass(frozen=True, repr=False)
class EnvValue:
    """An environment variable's text, parsed only once the field's type is known: a string
    field takes it as it is (``ANIMA_WEB__HOST=::`` is the host ``::``, not a YAML mapping)."""

    name: str
    raw: str

    def __repr__(self) -> str:  # as it appears inside an error's excerpt of a mapping
        return repr(self.raw)


def merge_env(data: dict[str, Any], env: Mapping[str, str], origins: dict[str, str]) -> None:
    """Merge ``ANIMA_*`` variables into ``data``; ``origins`` learns dotted key → variable.

    Config is ``ANIMA_<SECTION>__<KEY>`` (a section's typo is refused by name), or a top-level
    key's own name (``ANIMA_LOG_LEVEL``, ``ANIMA_MOTION`` as YAML); any other ``ANIMA_*`` name
    is another tool's (``ANIMA_CONFIG``, ``ANIMA_FLEET_TOKEN``, ``ANIMA_REACHY_DAEMON``)."""
    top = {f.name for f in dataclasses.fields(AnimaConfig)}
    for name, raw in sorted(env.items()):  # sorted: ANIMA_MOTION before ANIMA_MOTION__RATE_HZ
        if not name.startswith(ENV_PREFIX):
            continue
        rest = name[len(ENV_PREFIX) :]
        if "__" not in rest and rest.lower() not in top:
            log.debug("%s: not a config key (those are ANIMA_<SECTION>__<KEY>): ignored", name)
            continue
        keys = [k.lower() for k in rest.split("__")]
        node = data
        for key in keys[:-1]:
            child = node.setdefault(key, {})
            if isinstance(child, EnvValue):  # ANIMA_MOTION='{...}' and ANIMA_MOTION__X both
                child = node[key] = load_scalar_or_yaml(child.raw, f"environment {child.name}")
            if not isinstance(child, dict):
                raise ConfigError(f"environment {name}: {key} is not a section")
            node = child
        node[keys[-1]] = EnvValue(name, raw)
        dotted = ".".join(keys)
        for key in [k for k in origins if k.startswith(f"{dotted}.")]:
            del origins[key]  # the variable replaced what the file had under it
        origins[dotted] = f"environment {name}"


def origin_of(origins: Mapping[str, str], key: str, source: str) -> str:
    """Where ``key``'s value came from: its own origin, a variable that set something under it
    (``ANIMA_MOTION__RATE_HZ__X`` made ``motion.rate_hz`` a mapping), or the nearest enclosing
    key's."""
    below = sorted(o for k, o in origins.items() if k.startswith(f"{key}."))
    if key not in origins and below:
        return below[0]
    while key:
        if key in origins:
            return origins[key]
        key = re.sub(r"(\[[0-9]+\]|\.?[^.\[]*)$", "", key, count=1)
    return source


def from_env(tp: Any, value: EnvValue) -> Any:
    """An environment value as the field's type wants it: text for a string field, YAML for
    the rest (numbers, booleans, lists, whole sections); a null for an optional field."""
    args = typing.get_args(tp) if typing.get_origin(tp) in (Union, types.UnionType) else (tp,)
    if type(None) in args and value.raw.strip() in _NULLS:
        return None
    if str in args or any(is_choice(a) for a in args):
        return value.raw
    return load_scalar_or_yaml(value.raw, f"environment {value.name}")


def is_choice(tp: Any) -> bool:
    """A field whose value is one of a few names: a StrEnum or a Literal of strings."""
    return (isinstance(tp, type) and issubclass(tp, enum.StrEnum)) or (
        typing.get_origin(tp) is Literal
    )
