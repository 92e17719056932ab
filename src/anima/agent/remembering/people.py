"""Who is talking and what the robot keeps of them: :class:`Remembering`, the memory file
opened for the agent and the other doors, and the ``remember``/``forget`` actions."""

from __future__ import annotations

import collections
import logging
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from anima.agent.actions import ActionRegistry, ActionResult, make_action
from anima.agent.context import ActionContext
from anima.agent.remembering.words import meaning_words, subject_key, with_forms
from anima.errors import AnimaError, ConfigError
from anima.memory.store import EVERYONE, Memory, MemoryStore, words

if TYPE_CHECKING:
    from anima.config.memory import MemoryConfig

log = logging.getLogger(__name__)

TOLD_KEPT = 20  # memories told in this conversation that "forget what I told you" can reach


@dataclass(frozen=True, kw_only=True)
class Forgotten:
    rows: int  # rows removed (with what they superseded)


class Remembering:
    """The store and who is talking now (see the module docstring)."""

    def __init__(self, store: MemoryStore) -> None:
        self.store = store
        self._lock = threading.Lock()
        self._person: str | None = None
        self._told: collections.deque[int] = collections.deque(maxlen=TOLD_KEPT)
        # told each name given (anima.build: attention names the track of whoever speaks)
        self.on_name: list[Callable[[str], object]] = []
        # asked who is there when nobody gave a name in this conversation (anima.build:
        # attention's track of the person looked at, named earlier in its life)
        self.who_is_here: Callable[[], str | None] | None = None
        self.on_forget_person: list[Callable[[str], object]] = []  # attention drops the name

    @property
    def person(self) -> str | None:
        """The name of the person talking: the last one given in this conversation, else the
        name attention's track of the person looked at carries (:attr:`who_is_here`)."""
        with self._lock:
            person = self._person
        if person is None and self.who_is_here is not None:
            try:
                person = self.who_is_here()
            except Exception:  # attention failing never loses the conversation
                log.exception("who_is_here failed")
        return person

    def reset(self) -> None:
        """A new conversation: nobody named yet, nothing told."""
        with self._lock:
            self._person = None
            self._told.clear()

    def last_told(self) -> Memory | None:
        """The last memory told in this conversation that is still in the file."""
        with self._lock:
            told = list(self._told)
        for memory_id in reversed(told):
            memory = self.store.get(memory_id)
            if memory is not None:
                return memory
        return None

    def remember(self, what: str, who: str = "", *, correct: bool = False) -> Memory:
        """Keep ``what`` about ``who`` (the person talking when empty, else ``everyone``). A
        name ("my name is Ana") makes Ana the person talking. A memory with the same subject
        ("my favourite colour is …") replaces it; the same words again are kept once.
        ``correct``: ``what`` puts right the last memory told in this conversation (misheard:
        "no, I said Lyon"), which it replaces, about the same person."""
        last = self.last_told() if correct else None
        person = who.strip() or (last.who if last else None) or self.person or EVERYONE
        name = re.match(r"^my name is (.+)$", what.strip(), re.IGNORECASE)
        replaced = last.id if last is not None else self._replaced(what, person)
        old = self.store.get(replaced) if replaced is not None else None
        if old is not None and old.what.lower() == " ".join(what.split()).lower():
            memory = old  # told again in the same words: kept once
        else:
            memory = self.store.add(what, who=person, supersedes=replaced)
        with self._lock:
            named = name is not None and person != EVERYONE
            if named:
                self._person = memory.who
            if last is not None and last.id in self._told:
                self._told.remove(last.id)  # "forget what I told you" forgets the right one
            self._told.append(memory.id)
        if named:
            for hook in list(self.on_name):
                try:
                    hook(memory.who)
                except Exception:  # a listener's failure never loses the memory
                    log.exception("a name's listener failed")
        return memory

    def _replaced(self, what: str, who: str) -> int | None:
        key = subject_key(what)
        for old in self.store.recent(who=who, limit=200):
            if old.what.lower() == " ".join(what.split()).lower():
                return old.id
            if key is not None and subject_key(old.what) == key:
                return old.id
        return None

    def recall(self, question: str, limit: int = 3) -> list[Memory]:
        """The person's (and everyone's) memories that share meaning words with ``question``,
        best first."""
        terms = meaning_words(question)
        if not terms:
            return []
        terms = with_forms(terms)
        person = self.person  # read once: each read may ask attention who is there
        who = [EVERYONE] + ([person] if person else [])
        return self.store.search(" ".join(terms), who=who, limit=limit)

    def forget(
        self, about: str = "", who: str = "", *, everything: bool = False, last: bool = False
    ) -> Forgotten:
        """Forget: ``last`` the last memory told in this conversation; ``everything`` every
        memory about ``who`` (or the person talking); else the person's memories matching
        ``about`` (every word of it that carries meaning)."""
        person = who.strip() or self.person
        if last:
            with self._lock:
                told = list(self._told)
            for memory_id in reversed(told):  # the newest still in the file
                rows = self.store.forget([memory_id])
                if rows:
                    with self._lock:
                        if memory_id in self._told:
                            self._told.remove(memory_id)
                    return Forgotten(rows=rows)
            return Forgotten(rows=0)
        if everything:
            if person is None:
                return Forgotten(rows=0)
            rows = self.store.forget_person(person)
            with self._lock:
                if self._person is not None and self._person.lower() == person.lower():
                    self._person = None
            for hook in list(self.on_forget_person):
                try:
                    hook(person)
                except Exception:  # the memory is forgotten whatever a listener does
                    log.exception("a forgotten person's listener failed")
            return Forgotten(rows=rows)
        terms = set(meaning_words(about))
        if not terms:
            return Forgotten(rows=0)
        who_list = [person] if person else [EVERYONE]
        matches = [
            m
            for m in self.store.search(" ".join(sorted(terms)), who=who_list, limit=50)
            if terms <= set(words(m.what))
        ]
        rows = self.store.forget(m.id for m in matches)
        return Forgotten(rows=rows)


# ---------------------------------------------------------------------- the actions
def shared_memory(
    agent: object, config: MemoryConfig, registry: ActionRegistry
) -> Remembering | None:
    """``remember`` and ``forget`` for another door's ``registry`` (MCP's): on the running
    agent's memory when it has one (the same person talking, the same file), else on the file
    ``agent.memory`` names; None when memory is off."""
    memory = getattr(agent, "memory", None)
    if isinstance(memory, Remembering):
        register_memory(registry, memory)
        return memory
    return open_memory(config, registry)


def open_memory(config: MemoryConfig, registry: ActionRegistry) -> Remembering | None:
    """The memory file ``agent.memory`` names, its ``remember`` and ``forget`` added to
    ``registry``; None when memory is off."""
    if not config.enabled:
        return None
    try:
        store = MemoryStore(config.file(), max_memories=config.max_memories)
    except ConfigError as exc:
        if config.path:  # a file the operator named: the start stops, naming it
            raise
        # the default place cannot be written (a read-only home): the robot runs, forgetting
        log.warning("%s: running without memory (set agent.memory.path)", exc)
        return None
    memory = Remembering(store)
    register_memory(registry, memory)
    return memory


def register_memory(registry: ActionRegistry, memory: Remembering) -> None:
    """Add ``remember`` and ``forget`` on ``memory`` to ``registry``."""

    def remember(
        ctx: ActionContext, what: str, who: str = "", correct: bool = False
    ) -> ActionResult:
        """Remember something a person said, to recall it later (even after a restart).

        Args:
            what: the fact in the person's own words ("I like jazz", "my name is Ana")
            who: whose it is (a name); empty: the person talking, else everyone
            correct: what replaces the last thing told in this conversation (the person said
                it was misheard: "no, I said Lyon")
        """
        try:
            kept = memory.remember(what, who, correct=correct)
        except AnimaError as exc:
            return (False, str(exc))
        return (True, f"remembered #{kept.id} about {kept.who}: {kept.what}")

    def forget(
        ctx: ActionContext, about: str = "", who: str = "", everything: bool = False,
        last: bool = False,
    ) -> ActionResult:  # fmt: skip
        """Forget memories: the last thing told, everything about a person, or what matches.

        Args:
            about: words of the memory to forget ("that I like jazz")
            who: whose memories (a name); empty: the person talking
            everything: forget every memory about that person
            last: forget the last thing told in this conversation
        """
        try:
            gone = memory.forget(about, who, everything=everything, last=last)
        except AnimaError as exc:
            return (False, str(exc))
        if not gone.rows:
            return (False, "nothing to forget matched")
        return (True, f"forgot {gone.rows} memor{'y' if gone.rows == 1 else 'ies'}")

    registry.add(make_action(remember))
    registry.add(make_action(forget))
