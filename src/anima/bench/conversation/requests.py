"""The conversation evaluation set: requests as people phrase them, each with what it should do.

Files under ``benchmarks/conversation/``: ``requests.yaml`` (dev: anyone may tune on it),
``heldout.yaml`` (measured only) and ``fresh.yaml`` (measured only: written on 2026-12-05, after
the held-out set's misses had been read, and run once before that session's changes). Each
entry has ``text``, ``category`` and either ``expect`` (the plan, as canonical action strings; a
list of such lists gives alternatives) or ``expect_kind`` (``answer | refuse | not_understood |
stop``), with optional ``expect_words`` for answers. Every expected plan is validated against
the robot's own registry when the set is loaded, so a typo in the set is an error naming the
file and the entry, not a request that can
never be judged right.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal, get_args

from anima.agent.actions import ActionRegistry
from anima.agent.plan import parse_plan
from anima.config.files import FileRefusedError, read_text
from anima.config.yaml_text import load_yaml
from anima.errors import ConfigError, PlanError

Kind = Literal["act", "answer", "refuse", "not_understood", "stop"]
Split = Literal["dev", "heldout", "fresh"]
KINDS: tuple[str, ...] = get_args(Kind)
SPLIT_FILES: dict[str, str] = {
    "dev": "requests.yaml",
    "heldout": "heldout.yaml",
    "fresh": "fresh.yaml",
}
MAX_ENTRIES = 2000  # a set is read whole: refuse an absurd file
MAX_BYTES = 1_000_000  # … and its size
_KEYS = {"text", "category", "expect", "expect_kind", "expect_words"}


@dataclass(frozen=True, kw_only=True)
class Request:
    """One request of the set and what the robot should do about it."""

    text: str  # what the person says (after the wake phrase)
    category: str  # gesture, gaze, speech, multi_step, humanoid, question, oov, stop, chitchat…
    split: Split
    kind: Kind  # "act" when ``plans`` is given
    plans: tuple[tuple[str, ...], ...] = ()  # acceptable plans, canonical action strings
    words: tuple[str, ...] = ()  # answers: at least one of these words is said (lower case)
    where: str = ""  # file and entry number, for messages

    @property
    def humanoid(self) -> bool:
        return self.category == "humanoid"


def default_set_dir() -> Path:
    """``benchmarks/conversation`` of the source tree this package was installed from."""
    return Path(__file__).resolve().parents[4] / "benchmarks" / "conversation"


def load_requests(
    registry: ActionRegistry, split: Split, directory: Path | None = None
) -> list[Request]:
    """The requests of one split, every expected plan validated against ``registry``."""
    path = (directory or default_set_dir()) / SPLIT_FILES[split]
    try:  # a regular UTF-8 file of bounded size: a FIFO or /dev/zero is refused, not read
        text = read_text(path, MAX_BYTES)
    except FileRefusedError as exc:
        raise ConfigError(f"{path}: cannot read the evaluation set: {exc.reason}") from None
    except OSError as exc:
        raise ConfigError(
            f"{path}: cannot read the evaluation set: {exc.strerror or exc}"
        ) from None
    data, _ = load_yaml(text, str(path))
    entries = data.get("requests") if isinstance(data, dict) else None
    if not isinstance(entries, list) or not entries:
        raise ConfigError(f"{path}: needs a non-empty list under 'requests'")
    if len(entries) > MAX_ENTRIES:
        raise ConfigError(f"{path}: {len(entries)} entries, at most {MAX_ENTRIES}")
    return [_entry(registry, split, f"{path.name} entry {i}", e) for i, e in enumerate(entries, 1)]


def _entry(registry: ActionRegistry, split: Split, where: str, raw: object) -> Request:
    if not isinstance(raw, dict):
        raise ConfigError(f"{where}: must be a mapping with text, category and expect")
    unknown = sorted(str(k) for k in raw if k not in _KEYS)
    if unknown:
        raise ConfigError(f"{where}: unknown keys {', '.join(unknown)[:120]}")
    text, category = raw.get("text"), raw.get("category")
    if not isinstance(text, str) or not text.strip() or len(text) > 300:
        raise ConfigError(f"{where}: 'text' must be a non-empty string of at most 300 characters")
    if not isinstance(category, str) or not category:
        raise ConfigError(f"{where} ({text[:40]!r}): 'category' must be a string")
    where = f"{where} ({text[:40]!r})"
    expect, kind = raw.get("expect"), raw.get("expect_kind")
    if (expect is None) == (kind is None):
        raise ConfigError(f"{where}: give exactly one of 'expect' and 'expect_kind'")
    words = raw.get("expect_words", [])
    if not isinstance(words, list) or not all(isinstance(w, str) for w in words):
        raise ConfigError(f"{where}: 'expect_words' must be a list of words")
    if expect is not None:
        return Request(
            text=text, category=category, split=split, kind="act",
            plans=_plans(registry, where, expect), words=tuple(w.lower() for w in words),
            where=where,
        )  # fmt: skip
    if kind not in KINDS or kind == "act":
        raise ConfigError(f"{where}: expect_kind must be one of {', '.join(KINDS[1:])}")
    return Request(
        text=text, category=category, split=split, kind=kind,
        words=tuple(w.lower() for w in words), where=where,
    )  # fmt: skip


def _plans(registry: ActionRegistry, where: str, expect: object) -> tuple[tuple[str, ...], ...]:
    """``expect`` as alternatives of canonical plans (one plan, or a list of plans)."""
    if not isinstance(expect, list) or not expect:
        raise ConfigError(f"{where}: 'expect' must be a non-empty list of action strings")
    alternatives = expect if all(isinstance(x, list) for x in expect) else [expect]
    out: list[tuple[str, ...]] = []
    for plan in alternatives:
        if not plan or not all(isinstance(s, str) for s in plan):
            raise ConfigError(f"{where}: each expected plan is a non-empty list of strings")
        try:
            out.append(parse_plan(registry, plan).texts)
        except PlanError as exc:
            raise ConfigError(f"{where}: expected plan refused by the registry: {exc}") from None
    return tuple(out)
