"""The memory file: kept across opens, searched by words, replaced memories linked and never
recalled, forgetting leaving nothing in the table nor its full-text index, bounded with the
oldest unpinned dropped, exported and imported whole, its schema versioned."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from anima.errors import ConfigError, InvalidCommandError
from anima.memory.store import EVERYONE, SCHEMA_VERSION, MemoryStore, fts5_available

pytestmark = pytest.mark.fast


class Ticks:
    """A wall clock that moves one second per reading (memories get distinct times)."""

    def __init__(self) -> None:
        self.t = 1_000.0

    def __call__(self) -> float:
        self.t += 1.0
        return self.t


def store_at(path: Path, **kw: object) -> MemoryStore:
    return MemoryStore(path, now=Ticks(), **kw)  # type: ignore[arg-type]


def test_this_python_has_fts5() -> None:
    # docs/memory.md says the search is FTS5's here; the LIKE fallback is for other builds
    assert fts5_available()


def test_memories_survive_closing_and_reopening(tmp_path: Path) -> None:
    path = tmp_path / "m.sqlite3"
    with store_at(path) as first:
        ana = first.add("I like jazz", who="Ana")
        everyone = first.add("the meeting is at three", who="")
    with store_at(path) as again:
        assert again.get(ana.id) == ana
        assert again.get(everyone.id) is not None
        assert again.get(everyone.id).who == EVERYONE  # type: ignore[union-attr]
        assert again.count() == 2
        assert again.people() == ["Ana"]


def test_search_finds_by_words_and_person(tmp_path: Path) -> None:
    with store_at(tmp_path / "m.sqlite3") as s:
        s.add("I like jazz", who="Ana")
        s.add("I like tea", who="Bob")
        s.add("my favourite colour is blue", who="Ana")
        found = s.search("colour favourite", who=["Ana"])
        assert [m.what for m in found] == ["my favourite colour is blue"]
        assert [m.who for m in s.search("like", who=["bob"])] == ["Bob"]  # names: any case
        assert {m.who for m in s.search("like")} == {"Ana", "Bob"}
        assert s.search("piano") == []
        assert s.search("") == []
        assert s.search('"; DROP TABLE memories; --') == []  # words only, never SQL
        assert s.count() == 3


def test_a_replaced_memory_is_kept_linked_but_never_recalled(tmp_path: Path) -> None:
    with store_at(tmp_path / "m.sqlite3") as s:
        blue = s.add("my favourite colour is blue", who="Ana")
        green = s.add("my favourite colour is green", who="Ana", supersedes=blue.id)
        assert green.supersedes == blue.id
        assert [m.what for m in s.search("favourite colour")] == [green.what]
        assert [m.id for m in s.recent(who="Ana")] == [green.id]
        assert {m.id for m in s.recent(who="Ana", superseded=True)} == {blue.id, green.id}


def test_forgetting_leaves_nothing_behind(tmp_path: Path) -> None:
    path = tmp_path / "m.sqlite3"
    with store_at(path) as s:
        blue = s.add("my favourite colour is blue", who="Ana")
        green = s.add("my favourite colour is green", who="Ana", supersedes=blue.id)
        s.add("I like jazz", who="Ana")
        s.add("I like jazz too", who="Bob")
        assert s.residue("colour is blue") == 2  # the row and its index entry
        assert s.forget([green.id]) == 2  # and the memory it replaced
        assert s.residue("colour is blue") == 0
        assert s.residue("colour is green") == 0
        assert s.forget_person("ana") == 1
        assert s.residue("jazz") == 2  # Bob's, in the table and the index
        assert [m.who for m in s.recent()] == ["Bob"]
        assert s.forget([12345]) == 0
    raw = sqlite3.connect(path).execute("SELECT COUNT(*) FROM memories_fts").fetchone()[0]
    assert raw == 1


def test_the_oldest_unpinned_go_first_when_full(tmp_path: Path) -> None:
    with store_at(tmp_path / "m.sqlite3", max_memories=3) as s:
        pinned = s.add("the robot's owner is Ana", who="", pinned=True, source="operator")
        old = s.add("one", who="Ana")
        s.add("two", who="Ana")
        s.add("three", who="Ana")
        assert s.count() == 3
        assert s.get(pinned.id) is not None
        assert s.get(old.id) is None
        assert s.residue("one") == 0


def test_bad_memories_are_refused_by_what_is_wrong(tmp_path: Path) -> None:
    with store_at(tmp_path / "m.sqlite3") as s:
        with pytest.raises(InvalidCommandError, match="empty"):
            s.add("   ")
        with pytest.raises(InvalidCommandError, match="at most 500"):
            s.add("x" * 501)
        with pytest.raises(InvalidCommandError, match="control"):
            s.add("a\x00b")
        with pytest.raises(InvalidCommandError, match="who"):
            s.add("fine", who="n" * 61)
        with pytest.raises(InvalidCommandError, match="source"):
            s.add("fine", source="guess")  # type: ignore[arg-type]
        assert s.count() == 0


def test_export_then_import_gives_the_same_memories(tmp_path: Path) -> None:
    with store_at(tmp_path / "a.sqlite3") as a:
        blue = a.add("my favourite colour is blue", who="Ana")
        a.add("my favourite colour is green", who="Ana", supersedes=blue.id)
        a.add("the robot lives in room 4", who="", source="operator", pinned=True)
        exported = json.loads(a.dumps())
    with store_at(tmp_path / "b.sqlite3") as b:
        assert b.import_records(exported) == 3
        assert [m.what for m in b.search("favourite")] == ["my favourite colour is green"]
        again = b.export()
        assert [(m["who"], m["what"], m["pinned"]) for m in again] == [
            (m["who"], m["what"], m["pinned"]) for m in exported
        ]
        assert again[1]["supersedes"] == again[0]["id"]  # the link, on the new ids


@pytest.mark.parametrize(
    ("records", "message"),
    [
        ({"what": "x"}, "a JSON list"),
        (["x"], "item 0 is not an object"),
        ([{"what": ""}], "item 0: memory: nothing to remember"),
        ([{"what": "ok"}, {"what": "ok", "source": "rumour"}], "item 1"),
        ([{"what": "ok", "at": "nan"}], "item 0"),
        ([{"what": "ok", "pinned": "yes"}], "item 0"),
        ([{"what": "ok", "id": "7"}], "id must be an integer"),
    ],
)
def test_a_bad_import_adds_nothing(tmp_path: Path, records: object, message: str) -> None:
    with store_at(tmp_path / "m.sqlite3") as s:
        with pytest.raises(InvalidCommandError, match=message):
            s.import_records(records)
        assert s.count() == 0


def test_the_schema_is_versioned(tmp_path: Path) -> None:
    path = tmp_path / "m.sqlite3"
    store_at(path).close()
    db = sqlite3.connect(path)
    assert db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    db.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    db.commit()
    db.close()
    with pytest.raises(ConfigError, match="newer than this anima"):
        store_at(path)


def test_a_file_from_before_the_index_is_indexed_when_opened(tmp_path: Path) -> None:
    # version 0: the table alone (an older anima, or rows written by hand): migrated at open
    path = tmp_path / "m.sqlite3"
    db = sqlite3.connect(path)
    db.execute(
        "CREATE TABLE memories (id INTEGER PRIMARY KEY, who TEXT NOT NULL, what TEXT NOT NULL, "
        "at REAL NOT NULL, source TEXT NOT NULL, pinned INTEGER NOT NULL DEFAULT 0, "
        "supersedes INTEGER)"
    )
    db.execute(
        "INSERT INTO memories (who, what, at, source) VALUES ('Ana', 'I like jazz', 1, 'said')"
    )
    db.commit()
    db.close()
    with store_at(path) as s:
        assert [m.what for m in s.search("jazz")] == ["I like jazz"]


def test_a_file_that_is_not_a_database_is_named(tmp_path: Path) -> None:
    path = tmp_path / "m.sqlite3"
    path.write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(ConfigError, match=r"memory: cannot open .*m\.sqlite3"):
        store_at(path)


def test_an_unwritable_place_is_named(tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("a file where a directory should be", encoding="utf-8")
    with pytest.raises(ConfigError, match="memory: cannot open"):
        store_at(blocker / "anima" / "memory.sqlite3")


def test_the_default_place_unwritable_leaves_the_robot_without_memory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    from anima.agent.remembering import open_memory
    from anima.agent.vocabulary import builtin_registry
    from anima.config.memory import MemoryConfig

    blocker = tmp_path / "data"
    blocker.write_text("not a directory", encoding="utf-8")
    monkeypatch.setenv("XDG_DATA_HOME", str(blocker))
    registry = builtin_registry()
    assert open_memory(MemoryConfig(), registry) is None  # the default place: a warning
    assert "running without memory" in caplog.text
    assert "remember" not in registry.names()
    with pytest.raises(ConfigError, match="cannot open"):  # a place the operator named: stops
        open_memory(MemoryConfig(path=str(blocker / "m.sqlite3")), builtin_registry())
