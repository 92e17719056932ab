"""`anima memory …`: read, export, import and erase what the robot remembers (docs/memory.md).

Each command opens the memory file the config names (``agent.memory.path``; by default
``$XDG_DATA_HOME/anima/memory.sqlite3``) or ``--file``; a running robot may hold it open too
(SQLite's write-ahead log lets both read and write).
"""

from __future__ import annotations

import json
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from anima.cli.common import ConfigOpt, fail
from anima.errors import AnimaError, ConfigError

if TYPE_CHECKING:
    from anima.memory.store import Memory, MemoryStore

app = typer.Typer(
    help="What the robot remembers: list, show, forget, export, import.", no_args_is_help=True
)

FileOpt = Annotated[
    Path | None,
    typer.Option("--file", "-f", help="The memory file (default: agent.memory.path's)."),
]
MAX_IMPORT_BYTES = 64 * 1024 * 1024


def _open(config: Path | None, file: Path | None, *, make: bool = False) -> MemoryStore:
    """The memory file; one that does not exist is made only for ``make`` (an import): reading
    or forgetting opens an empty store in memory instead of leaving a file behind."""
    from anima.config import load_config
    from anima.memory.store import MemoryStore

    cfg = load_config(config).agent.memory
    path = file or cfg.file()
    if not make and not path.exists():
        typer.echo(f"(no memory file at {path})", err=True)
        return MemoryStore(":memory:")
    return MemoryStore(path, max_memories=cfg.max_memories)


def _line(m: Memory) -> str:
    when = datetime.fromtimestamp(m.at, UTC).strftime("%Y-%m-%d %H:%M")
    flags = ("pinned " if m.pinned else "") + (f"replaces #{m.supersedes} " if m.supersedes else "")
    return f"#{m.id:<5} {when}  {m.who:<16} {m.source:<8} {flags}{m.what}"


@app.command("list")
def list_memories(
    who: Annotated[str | None, typer.Option(help="Only about this person.")] = None,
    search: Annotated[str | None, typer.Option(help="Only memories with these words.")] = None,
    limit: Annotated[int, typer.Option(min=1, help="At most this many.")] = 50,
    as_json: Annotated[bool, typer.Option("--json", help="As JSON.")] = False,
    file: FileOpt = None,
    config: ConfigOpt = None,
) -> None:
    """The memories, newest first (replaced ones left out)."""
    try:
        with _open(config, file) as store:
            if search:
                found = store.search(search, who=[who] if who else None, limit=limit)
            else:
                found = store.recent(who=who, limit=limit)
    except AnimaError as exc:
        raise fail(exc) from exc
    if as_json:
        typer.echo(json.dumps([m.as_dict() for m in found], ensure_ascii=False, indent=1))
        return
    for m in found:
        typer.echo(_line(m))
    if not found:
        typer.echo("no memories", err=True)


@app.command("show")
def show(
    memory_id: Annotated[int, typer.Argument(help="The memory's id (anima memory list).")],
    file: FileOpt = None,
    config: ConfigOpt = None,
) -> None:
    """One memory, every field (JSON)."""
    try:
        with _open(config, file) as store:
            found = store.get(memory_id)
    except AnimaError as exc:
        raise fail(exc) from exc
    if found is None:
        raise fail(ConfigError(f"no memory #{memory_id}"))
    typer.echo(json.dumps(found.as_dict(), ensure_ascii=False, indent=1))


@app.command("forget")
def forget(
    memory_ids: Annotated[list[int] | None, typer.Argument(help="Ids to forget.")] = None,
    who: Annotated[str | None, typer.Option(help="Forget everything about this person.")] = None,
    everything: Annotated[bool, typer.Option("--all", help="Forget every memory.")] = False,
    file: FileOpt = None,
    config: ConfigOpt = None,
) -> None:
    """Forget memories by id (with what they replaced), everything about a person, or all."""
    chosen = sum((bool(memory_ids), who is not None, everything))
    if chosen != 1:
        raise fail(ConfigError("say what to forget: ids, --who NAME, or --all (one of them)"))
    try:
        with _open(config, file) as store:
            if everything:
                gone = store.clear()
            elif who is not None:
                gone = store.forget_person(who)
            else:
                gone = store.forget(memory_ids or [])
    except AnimaError as exc:
        raise fail(exc) from exc
    typer.echo(f"forgot {gone} memor{'y' if gone == 1 else 'ies'}")


@app.command("export")
def export(
    out: Annotated[
        Path | None, typer.Argument(help="A JSON file (default: standard output).")
    ] = None,
    file: FileOpt = None,
    config: ConfigOpt = None,
) -> None:
    """Every memory (replaced ones too, linked) as a JSON list."""
    try:
        with _open(config, file) as store:
            text = store.dumps()
    except AnimaError as exc:
        raise fail(exc) from exc
    if out is None:
        typer.echo(text)
    else:
        out.write_text(text + "\n", encoding="utf-8")
        typer.echo(f"exported to {out}", err=True)


@app.command("import")
def import_memories(
    source: Annotated[
        Path, typer.Argument(help="A JSON file from `anima memory export` ('-': stdin).")
    ],
    file: FileOpt = None,
    config: ConfigOpt = None,
) -> None:
    """Add the memories of an export (each checked first: a bad file adds nothing)."""
    try:
        if str(source) == "-":
            raw = sys.stdin.read(MAX_IMPORT_BYTES + 1)
        else:
            raw = source.read_text(encoding="utf-8")
        if len(raw) > MAX_IMPORT_BYTES:
            raise ConfigError(f"{source}: larger than {MAX_IMPORT_BYTES // 2**20} MB")
        try:
            records = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise ConfigError(f"{source}: not JSON ({exc.msg}, line {exc.lineno})") from None
        with _open(config, file, make=True) as store:
            added = store.import_records(records)
    except OSError as exc:
        raise fail(ConfigError(f"{source}: {exc.strerror or exc}")) from exc
    except AnimaError as exc:
        raise fail(exc) from exc
    typer.echo(f"imported {added} memor{'y' if added == 1 else 'ies'}")
