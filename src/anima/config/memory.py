"""``agent.memory:``: what the robot remembers of people, kept on disk (docs/memory.md)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from anima.config.bounds import count
from anima.errors import ConfigError

MAX_PATH = 4096


def default_memory_path() -> Path:
    """``$XDG_DATA_HOME/anima/memory.sqlite3`` (``~/.local/share/anima/…`` when unset)."""
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "anima" / "memory.sqlite3"


@dataclass(frozen=True, kw_only=True)
class MemoryConfig:
    enabled: bool = True  # remember names and what people ask it to (the voice agent)
    path: str = ""  # the SQLite file; empty: $XDG_DATA_HOME/anima/memory.sqlite3
    max_memories: int = 10_000  # more than this: the oldest unpinned ones are dropped
    # when a conversation ends, an LLM planner condenses it into a few memories (never the
    # rule planner; what was kept is said in a notice)
    summarise: bool = False

    def __post_init__(self) -> None:
        if not isinstance(self.summarise, bool):
            raise ConfigError("agent.memory.summarise must be true or false", key="agent.memory")
        if not isinstance(self.enabled, bool):
            raise ConfigError("agent.memory.enabled must be true or false", key="agent.memory")
        if len(self.path) > MAX_PATH or "\x00" in self.path:
            raise ConfigError("agent.memory.path must be a file path", key="agent.memory.path")
        count("agent.memory", 1, 1_000_000, max_memories=self.max_memories)

    def file(self) -> Path:
        """The memory file in effect."""
        return Path(self.path).expanduser() if self.path else default_memory_path()
