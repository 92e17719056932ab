"""The robot's memory on disk: one SQLite file, each memory a small record (docs/memory.md).

A :class:`Memory` is who it is about (a person's name, or ``everyone``), what (a short
sentence as the person said it: "my favourite colour is blue"), when (wall-clock seconds), its
source (``said`` by the person, set by an ``operator``, a ``summary``), ``pinned`` (never dropped
for room) and ``supersedes`` (the id of the memory it replaced: "my favourite colour is green"
told later). A superseded memory stays on disk, linked, and is never recalled; forgetting a
memory removes it and every memory it superseded.

The file is SQLite (the standard library's ``sqlite3``) in write-ahead-log mode, so a process
killed in the middle of a write leaves the last committed state (each change is one
transaction). Full-text search uses SQLite's FTS5 where the interpreter's SQLite has it (the
CPython builds here do: 3.40) through an external-content index kept by triggers, so forgetting
leaves nothing in the index; its words are stemmed (Porter: "studied" finds "study"); without
FTS5, a search counts the words a memory has in common with the query. The schema has
a version (``PRAGMA user_version``): an older file is migrated when opened, a newer one is
refused by name. At most ``max_memories`` are kept: the oldest unpinned ones go first.

Safe to share between threads (one connection, one lock).
"""

from __future__ import annotations

import json
import math
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any, cast

from anima.errors import ConfigError, InvalidCommandError
from anima.memory.record import (
    EVERYONE,
    MAX_MEMORIES,
    MAX_WHAT,
    MAX_WHO,
    SOURCES,
    Memory,
    Source,
    clean_what,
    clean_who,
    memory_of,
    words,
)
from anima.memory.schema import (
    COLUMNS,
    CURRENT,
    FTS,
    SCHEMA,
    SCHEMA_VERSION,
    fts5_available,
)

__all__ = [
    "EVERYONE",
    "MAX_WHAT",
    "MAX_WHO",
    "SCHEMA_VERSION",
    "Memory",
    "MemoryStore",
    "Source",
    "clean_what",
    "clean_who",
    "fts5_available",
    "words",
]


class MemoryStore:
    """The memory file (see the module docstring). ``path``: the file (``":memory:"`` for a
    store that lives as long as the object); ``now``: the wall clock (a test's own)."""

    def __init__(
        self,
        path: str | Path,
        *,
        max_memories: int = MAX_MEMORIES,
        now: Callable[[], float] = time.time,
    ) -> None:
        if not 1 <= max_memories <= 1_000_000:
            raise ConfigError(f"memory: max_memories must be 1 to 1000000, got {max_memories}")
        self.path = str(path)
        self.max_memories = max_memories
        self._now = now
        self._lock = threading.Lock()
        try:
            if self.path != ":memory:":
                Path(self.path).expanduser().parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(
                str(Path(self.path).expanduser()) if self.path != ":memory:" else self.path,
                check_same_thread=False,
                isolation_level=None,  # transactions are explicit (BEGIN IMMEDIATE … COMMIT)
                timeout=5.0,
            )
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")  # WAL: durable at checkpoints
            self._db.execute("PRAGMA foreign_keys=OFF")
            self.fts = fts5_available()
            self._migrate()
        except (sqlite3.DatabaseError, OSError) as exc:
            raise ConfigError(f"memory: cannot open {self.path}: {exc}") from None

    # ------------------------------------------------------------------ schema
    def _migrate(self) -> None:
        version = int(self._db.execute("PRAGMA user_version").fetchone()[0])
        if version > SCHEMA_VERSION:
            raise ConfigError(
                f"memory: {self.path} has schema version {version}, newer than this anima's "
                f"{SCHEMA_VERSION}: upgrade anima, or point agent.memory.path elsewhere"
            )
        with self._transaction():
            for statement in SCHEMA:
                self._db.execute(statement)
            if self.fts:
                for statement in FTS:
                    self._db.execute(statement)
                if version == 0:  # an index made now covers the rows already there
                    self._db.execute("INSERT INTO memories_fts(memories_fts) VALUES ('rebuild')")
            self._db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")

    def _transaction(self) -> _Transaction:
        return _Transaction(self._db)

    # ------------------------------------------------------------------ writing
    def add(
        self,
        what: str,
        *,
        who: str | None = None,
        source: Source = "said",
        pinned: bool = False,
        supersedes: int | None = None,
    ) -> Memory:
        """Keep a memory; the oldest unpinned ones go when the store is full."""
        text, person = clean_what(what), clean_who(who)
        if source not in SOURCES:
            raise InvalidCommandError(f"memory: source must be one of {', '.join(SOURCES)}")
        with self._lock, self._transaction():
            if supersedes is not None and self._row(supersedes) is None:
                supersedes = None  # forgotten meanwhile: nothing to link
            at = self._now()
            cur = self._db.execute(
                "INSERT INTO memories (who, what, at, source, pinned, supersedes) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                (person, text, at, source, int(pinned), supersedes),
            )
            memory_id = int(cast(int, cur.lastrowid))
            self._prune()
        return Memory(
            id=memory_id, who=person, what=text, at=at, source=source, pinned=pinned,
            supersedes=supersedes,
        )  # fmt: skip

    def _prune(self) -> None:
        over = self._count() - self.max_memories
        if over > 0:
            self._db.execute(
                "DELETE FROM memories WHERE id IN (SELECT id FROM memories WHERE pinned = 0 "
                "ORDER BY at, id LIMIT ?)",
                (over,),
            )

    def pin(self, memory_id: int, pinned: bool = True) -> bool:
        """Pin (or unpin) a memory; False when there is none with that id."""
        with self._lock, self._transaction():
            cur = self._db.execute(
                "UPDATE memories SET pinned = ? WHERE id = ?", (int(pinned), memory_id)
            )
            return cur.rowcount > 0

    def forget(self, ids: Iterable[int]) -> int:
        """Remove these memories and every one they superseded; how many rows went."""
        wanted = [int(i) for i in ids]
        if not wanted:
            return 0
        with self._lock, self._transaction():
            gone: set[int] = set()
            todo = list(wanted)
            while todo:  # follow each chain back: what it replaced goes too
                memory_id = todo.pop()
                if memory_id in gone:
                    continue
                row = self._db.execute(
                    "SELECT supersedes FROM memories WHERE id = ?", (memory_id,)
                ).fetchone()
                if row is None:
                    continue
                gone.add(memory_id)
                if row[0] is not None:
                    todo.append(int(row[0]))
            self._db.executemany("DELETE FROM memories WHERE id = ?", [(i,) for i in gone])
            return len(gone)

    def forget_person(self, who: str) -> int:
        """Remove every memory about ``who``; how many went."""
        person = clean_who(who)
        with self._lock, self._transaction():
            cur = self._db.execute("DELETE FROM memories WHERE who = ? COLLATE NOCASE", (person,))
            return cur.rowcount

    def clear(self) -> int:
        """Remove every memory; how many went."""
        with self._lock, self._transaction():
            return self._db.execute("DELETE FROM memories").rowcount

    # ------------------------------------------------------------------ reading
    def get(self, memory_id: int) -> Memory | None:
        with self._lock:
            return self._row(memory_id)

    def _row(self, memory_id: int) -> Memory | None:
        row = self._db.execute(
            f"SELECT {COLUMNS} FROM memories AS m WHERE m.id = ?", (memory_id,)
        ).fetchone()
        return memory_of(row) if row is not None else None

    def count(self) -> int:
        with self._lock:
            return self._count()

    def _count(self) -> int:
        return int(self._db.execute("SELECT COUNT(*) FROM memories").fetchone()[0])

    def recent(
        self, *, who: str | None = None, limit: int = 50, superseded: bool = False
    ) -> list[Memory]:
        """The newest memories first (about ``who`` only, when given); the ones a newer memory
        replaced only with ``superseded``."""
        where, args = [], list[Any]()
        if who is not None:
            where.append("m.who = ? COLLATE NOCASE")
            args.append(clean_who(who))
        if not superseded:
            where.append(CURRENT)
        clause = f"WHERE {' AND '.join(where)}" if where else ""
        with self._lock:
            rows = self._db.execute(
                f"SELECT {COLUMNS} FROM memories AS m {clause} ORDER BY m.at DESC, m.id DESC "
                "LIMIT ?",
                (*args, max(0, limit)),
            ).fetchall()
        return [memory_of(r) for r in rows]

    def search(
        self, query: str, *, who: Sequence[str] | None = None, limit: int = 10
    ) -> list[Memory]:
        """Current memories sharing words with ``query``, the best match first (FTS5's bm25;
        without FTS5, the most words in common); ``who``: only about these people."""
        terms = sorted({w.split("'")[0] for w in words(query)} - {""})  # "son's" → "son"
        if not terms or limit <= 0:
            return []
        people = [clean_who(w) for w in who] if who is not None else None
        if self.fts:
            match = " OR ".join('"' + t.replace('"', '""') + '"' for t in terms)
            sql = (
                f"SELECT {COLUMNS} FROM memories_fts JOIN memories AS m "
                "ON m.id = memories_fts.rowid WHERE memories_fts MATCH ? "
                f"AND {CURRENT}"
            )
            args: list[Any] = [f"what : ({match})"]
            if people is not None:
                sql += f" AND m.who COLLATE NOCASE IN ({', '.join('?' * len(people))})"
                args += people
            sql += " ORDER BY bm25(memories_fts), m.at DESC LIMIT ?"
            with self._lock:
                rows = self._db.execute(sql, (*args, limit)).fetchall()
            return [memory_of(r) for r in rows]
        named = None if people is None else {p.lower() for p in people}
        everyone_s = self.recent(limit=self.max_memories)
        found = [m for m in everyone_s if named is None or m.who.lower() in named]
        wanted = set(terms)
        scored = [(len(set(words(m.what)) & wanted), m) for m in found]
        scored = [(s, m) for s, m in scored if s > 0]
        scored.sort(key=lambda sm: (-sm[0], -sm[1].at))
        return [m for _, m in scored[:limit]]

    def people(self) -> list[str]:
        """Everyone the memory holds something about (``everyone`` aside), by name."""
        with self._lock:
            rows = self._db.execute(
                "SELECT DISTINCT who FROM memories WHERE who != ? ORDER BY who COLLATE NOCASE",
                (EVERYONE,),
            ).fetchall()
        return [str(r[0]) for r in rows]

    # ------------------------------------------------------------------ export / import
    def export(self) -> list[dict[str, Any]]:
        """Every memory, superseded ones included, oldest first (JSON-ready)."""
        with self._lock:
            rows = self._db.execute(
                f"SELECT {COLUMNS} FROM memories AS m ORDER BY m.at, m.id"
            ).fetchall()
        return [memory_of(r).as_dict() for r in rows]

    def import_records(self, records: object) -> int:
        """Add exported records (a list of objects with at least ``what``); each is checked
        before any is written, so a bad file adds nothing. Ids are new; ``supersedes`` links
        inside the file are kept. How many were added."""
        if not isinstance(records, list):
            raise InvalidCommandError("memory import: expected a JSON list of memories")
        checked: list[tuple[int | None, str, str, float, Source, bool, int | None]] = []
        for n, record in enumerate(records):
            if not isinstance(record, dict):
                raise InvalidCommandError(f"memory import: item {n} is not an object")
            try:
                what = clean_what(record.get("what", ""))
                who = clean_who(record.get("who"))
                at = float(record.get("at", self._now()))
                source = record.get("source", "operator")
                pinned = record.get("pinned", False)
                old_id = record.get("id")
                supersedes = record.get("supersedes")
            except (TypeError, ValueError, InvalidCommandError) as exc:
                raise InvalidCommandError(f"memory import: item {n}: {exc}") from None
            if not math.isfinite(at) or source not in SOURCES or not isinstance(pinned, bool):
                raise InvalidCommandError(
                    f"memory import: item {n}: needs a finite 'at', a 'source' of "
                    f"{', '.join(SOURCES)} and a true/false 'pinned'"
                )
            for key, value in (("id", old_id), ("supersedes", supersedes)):
                if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
                    raise InvalidCommandError(f"memory import: item {n}: {key} must be an integer")
            checked.append((old_id, what, who, at, cast(Source, source), pinned, supersedes))
        new_ids: dict[int, int] = {}
        with self._lock, self._transaction():
            for old_id, what, who, at, source, pinned, supersedes in checked:
                link = new_ids.get(supersedes) if supersedes is not None else None
                cur = self._db.execute(
                    "INSERT INTO memories (who, what, at, source, pinned, supersedes) "
                    "VALUES (?, ?, ?, ?, ?, ?)",
                    (who, what, at, source, int(pinned), link),
                )
                if old_id is not None:
                    new_ids[old_id] = int(cast(int, cur.lastrowid))
            self._prune()
        return len(checked)

    def residue(self, text: str) -> int:
        """Rows anywhere in the file (the table and its full-text index) still holding
        ``text``: what ``forget`` must leave at 0 (the tests and the bench check it)."""
        with self._lock:
            n = int(
                self._db.execute(
                    "SELECT COUNT(*) FROM memories WHERE instr(what, ?) > 0", (text,)
                ).fetchone()[0]
            )
            if self.fts:
                terms = words(text)
                if terms:
                    phrase = '"' + " ".join(terms).replace('"', '""') + '"'
                    n += int(
                        self._db.execute(
                            "SELECT COUNT(*) FROM memories_fts WHERE memories_fts MATCH ?",
                            (phrase,),
                        ).fetchone()[0]
                    )
        return n

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def __enter__(self) -> MemoryStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def dumps(self) -> str:
        """The export as JSON text."""
        return json.dumps(self.export(), ensure_ascii=False, indent=1)


class _Transaction:
    """``BEGIN IMMEDIATE`` … ``COMMIT`` (``ROLLBACK`` on an exception)."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self._db = db

    def __enter__(self) -> None:
        self._db.execute("BEGIN IMMEDIATE")

    def __exit__(self, kind: object, *rest: object) -> None:
        self._db.execute("ROLLBACK" if kind is not None else "COMMIT")
