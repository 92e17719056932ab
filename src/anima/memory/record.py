"""One memory as it is kept: the record, the rules its fields follow, and the words a search
matches on (:mod:`anima.memory.store` keeps them)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any, Literal, cast

from anima.errors import InvalidCommandError

EVERYONE = "everyone"
SOURCES = ("said", "operator", "summary")
Source = Literal["said", "operator", "summary"]
MAX_WHAT = 500  # characters: a memory is a sentence, not a document
MAX_WHO = 60
MAX_MEMORIES = 10_000
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_WORD = re.compile(r"[^\W_]+(?:'[^\W_]+)?", re.UNICODE)


@dataclass(frozen=True, kw_only=True)
class Memory:
    """One memory (see the module docstring)."""

    id: int
    who: str
    what: str
    at: float  # wall-clock seconds (time.time) when it was made
    source: Source
    pinned: bool = False
    supersedes: int | None = None

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def clean_who(who: str | None) -> str:
    """A person's name as stored: trimmed, one space between words; empty → ``everyone``."""
    text = " ".join((who or "").split())
    if not text:
        return EVERYONE
    if len(text) > MAX_WHO or _CONTROL.search(text):
        raise InvalidCommandError(f"memory: who must be a name of at most {MAX_WHO} characters")
    return EVERYONE if text.lower() == EVERYONE else text


def clean_what(what: str) -> str:
    """What to remember as stored: trimmed, one space between words, 1 to 500 characters."""
    if not isinstance(what, str):
        raise InvalidCommandError("memory: what must be text")
    text = " ".join(what.split())
    if not text:
        raise InvalidCommandError("memory: nothing to remember (empty text)")
    if len(text) > MAX_WHAT:
        raise InvalidCommandError(
            f"memory: at most {MAX_WHAT} characters to remember, got {len(text)}"
        )
    if _CONTROL.search(text):
        raise InvalidCommandError("memory: control characters are not remembered")
    return text


def words(text: str) -> list[str]:
    """The words of ``text``, lower case (what a search matches on)."""
    return [w.lower() for w in _WORD.findall(text)]


def memory_of(row: Sequence[Any]) -> Memory:
    """The memory a row of ``SELECT`` :data:`~anima.memory.schema.COLUMNS` holds."""
    return Memory(
        id=int(row[0]), who=str(row[1]), what=str(row[2]), at=float(row[3]),
        source=cast(Source, row[4]), pinned=bool(row[5]),
        supersedes=None if row[6] is None else int(row[6]),
    )  # fmt: skip
