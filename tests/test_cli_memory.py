"""`anima memory …` on a memory file: list, search, show, forget, export and import, each bad
input refused in one line with exit code 2 and nothing changed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from anima.cli import app
from anima.memory.store import MemoryStore

pytestmark = pytest.mark.fast

runner = CliRunner()


def memory(path: Path, *args: str, stdin: str | None = None) -> tuple[int, str]:
    result = runner.invoke(app, ["memory", *args, "--file", str(path)], input=stdin)
    return result.exit_code, result.output


@pytest.fixture
def path(tmp_path: Path) -> Path:
    p = tmp_path / "memory.sqlite3"
    with MemoryStore(p) as s:
        old = s.add("my favourite colour is blue", who="Ana")
        s.add("my favourite colour is green", who="Ana", supersedes=old.id)
        s.add("I like tea", who="Bob")
    return p


def test_list_search_and_show(path: Path) -> None:
    code, out = memory(path, "list")
    assert code == 0
    assert "green" in out
    assert "Bob" in out
    assert "blue" not in out  # replaced
    code, out = memory(path, "list", "--search", "tea", "--json")
    assert code == 0
    assert [m["what"] for m in json.loads(out)] == ["I like tea"]
    code, out = memory(path, "show", "2")
    assert json.loads(out)["supersedes"] == 1
    code, out = memory(path, "show", "99")
    assert code == 2
    assert "no memory #99" in out


def test_export_then_import_elsewhere(path: Path, tmp_path: Path) -> None:
    out_file = tmp_path / "export.json"
    assert memory(path, "export", str(out_file))[0] == 0
    other = tmp_path / "other.sqlite3"
    code, out = memory(other, "import", str(out_file))
    assert (code, out.strip()) == (0, "imported 3 memories")
    with MemoryStore(other) as s:
        assert [m.what for m in s.search("favourite")] == ["my favourite colour is green"]


@pytest.mark.parametrize(
    ("stdin", "message"),
    [
        ("not json", "not JSON"),
        ('{"what": "x"}', "a JSON list"),
        ('[{"what": "fine"}, {"what": ""}]', "item 1"),
    ],
)
def test_a_bad_import_changes_nothing(path: Path, stdin: str, message: str) -> None:
    code, out = memory(path, "import", "-", stdin=stdin)
    assert code == 2
    assert message in out
    with MemoryStore(path) as s:
        assert s.count() == 3


def test_forget_by_id_person_or_all(path: Path) -> None:
    assert memory(path, "forget")[0] == 2  # nothing said: refused
    assert memory(path, "forget", "2")[1].strip() == "forgot 2 memories"  # and what it replaced
    assert memory(path, "forget", "--who", "bob")[1].strip() == "forgot 1 memory"
    with MemoryStore(path) as s:
        assert s.count() == 0
        assert s.residue("tea") == 0
        s.add("x")
    assert memory(path, "forget", "--all")[1].strip() == "forgot 1 memory"


def test_a_file_that_is_not_a_memory_is_named(tmp_path: Path) -> None:
    bad = tmp_path / "bad.sqlite3"
    bad.write_bytes(b"x" * 2048)
    code, out = memory(bad, "list")
    assert code == 2
    assert "cannot open" in out


def test_reading_a_memory_that_was_never_made_makes_no_file(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere" / "memory.sqlite3"
    for args in (("list",), ("export",), ("forget", "--all"), ("show", "1")):
        code, out = memory(missing, *args)
        assert code in (0, 2), out
        assert "no memory file at" in out
    assert not missing.exists()
    assert not missing.parent.exists()
    code, out = memory(missing, "import", "-", stdin='[{"what": "made by the import"}]')
    assert (code, out.strip()) == (0, "imported 1 memory")
    assert missing.exists()
