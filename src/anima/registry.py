"""A registry: the names a config may give one kind of part, and what makes each.

Each pluggable kind has one protocol (in its module) and one :class:`Registry`: the driver,
the audio sink (:data:`anima.config.speech_parts.SINKS`), the audio source and the listening parts
(:mod:`anima.listening.registry`), the planner, the TTS engine, the front door, the humanoid
(:data:`anima.humanoid.registry.HUMANOIDS`). A name is checked when the config loads
(:meth:`Registry.check`: a ConfigError that lists the known names), and its maker is imported
only when a part is made (:meth:`Registry.load`), so loading a config imports no engine.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from anima.errors import ConfigError


@dataclass(frozen=True)
class Registry:
    """Names of one kind of part → ``"module:attr"`` of the class or function that makes it."""

    key: str  # the config key that names one, for messages: "listen.asr"
    entries: dict[str, str]

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(self.entries)

    def check(self, name: object) -> str:
        """``name`` if it is registered, else a :class:`ConfigError` listing the known names."""
        if not isinstance(name, str) or name not in self.entries:
            shown = repr(name) if len(repr(name)) <= 40 else repr(name)[:37] + "..."
            raise ConfigError(f"{self.key} must be one of {', '.join(self.names)}, got {shown}")
        return name

    def load(self, name: str) -> Callable[..., Any]:
        """The maker registered as ``name`` (imported now)."""
        module, _, attr = self.entries[self.check(name)].partition(":")
        made: Callable[..., Any] = getattr(importlib.import_module(module), attr)
        return made
