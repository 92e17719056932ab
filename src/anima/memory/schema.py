"""The memory file's tables: the memories, their full-text index kept by triggers, and the
schema's version (:mod:`anima.memory.store` creates and migrates them)."""

from __future__ import annotations

import sqlite3

SCHEMA_VERSION = 1
SCHEMA = (
    """CREATE TABLE IF NOT EXISTS memories (
        id INTEGER PRIMARY KEY,
        who TEXT NOT NULL,
        what TEXT NOT NULL,
        at REAL NOT NULL,
        source TEXT NOT NULL,
        pinned INTEGER NOT NULL DEFAULT 0,
        supersedes INTEGER
    )""",
    "CREATE INDEX IF NOT EXISTS memories_who ON memories (who COLLATE NOCASE)",
    "CREATE INDEX IF NOT EXISTS memories_supersedes ON memories (supersedes)",
)
FTS = (
    """CREATE VIRTUAL TABLE IF NOT EXISTS memories_fts USING fts5(
        what, who, content='memories', content_rowid='id', tokenize='porter unicode61'
    )""",
    """CREATE TRIGGER IF NOT EXISTS memories_ai AFTER INSERT ON memories BEGIN
        INSERT INTO memories_fts(rowid, what, who) VALUES (new.id, new.what, new.who);
    END""",
    """CREATE TRIGGER IF NOT EXISTS memories_ad AFTER DELETE ON memories BEGIN
        INSERT INTO memories_fts(memories_fts, rowid, what, who)
        VALUES ('delete', old.id, old.what, old.who);
    END""",
    """CREATE TRIGGER IF NOT EXISTS memories_au AFTER UPDATE ON memories BEGIN
        INSERT INTO memories_fts(memories_fts, rowid, what, who)
        VALUES ('delete', old.id, old.what, old.who);
        INSERT INTO memories_fts(rowid, what, who) VALUES (new.id, new.what, new.who);
    END""",
)
# a memory that a newer one replaced is never recalled
CURRENT = "NOT EXISTS (SELECT 1 FROM memories AS n WHERE n.supersedes = m.id)"
COLUMNS = "m.id, m.who, m.what, m.at, m.source, m.pinned, m.supersedes"


def fts5_available() -> bool:
    """Whether this interpreter's SQLite has FTS5."""
    try:
        with sqlite3.connect(":memory:") as db:
            db.execute("CREATE VIRTUAL TABLE t USING fts5(a)")
        return True
    except sqlite3.OperationalError:
        return False
