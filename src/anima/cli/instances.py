"""Finding running `anima serve` instances: one pid file per robot (its MQTT prefix).

``anima serve`` writes ``$XDG_RUNTIME_DIR/anima-<uid>-<prefix>.pid`` (the temp folder when
``XDG_RUNTIME_DIR`` is unset); ``anima animations reload`` reads them, so two robots served from
one account never signal each other's runtime. A pid file is trusted only while the process it
names is still an ``anima serve``: a stale one may name an unrelated process by now.
"""

from __future__ import annotations

import os
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path

_NAME = re.compile(r"^anima-(?P<uid>\d+)-(?P<prefix>.+)\.pid$")
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]")


def folder() -> Path:
    return Path(os.environ.get("XDG_RUNTIME_DIR") or tempfile.gettempdir())


def pid_file(prefix: str) -> Path:
    """The pid file of the instance serving ``prefix`` (unsafe characters become ``_``)."""
    return folder() / f"anima-{os.getuid()}-{_UNSAFE.sub('_', prefix)}.pid"


@dataclass(frozen=True)
class Instance:
    prefix: str  # as in the file name
    pid: int
    path: Path


def is_anima_serve(pid: int) -> bool:
    """True when process ``pid`` is alive and runs ``anima serve`` (or ``anima console``)."""
    try:
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return False
    return b"anima" in b" ".join(argv) and bool({b"serve", b"console"} & set(argv))


def read_pid(path: Path) -> int:
    """The pid in ``path``; ValueError naming what is wrong with it."""
    text = path.read_text().strip()
    if not text.isdigit():
        raise ValueError(f"{path} does not hold a process id ({text[:20]!r})")
    return int(text)


def running() -> tuple[list[Instance], list[str]]:
    """The live instances of this user, and a line for each pid file that is stale or garbled."""
    found: list[Instance] = []
    problems: list[str] = []
    uid = str(os.getuid())
    for path in sorted(folder().glob(f"anima-{uid}-*.pid")):
        match = _NAME.match(path.name)
        if match is None:
            continue
        try:
            pid = read_pid(path)
        except (OSError, ValueError) as exc:
            problems.append(str(exc))
            continue
        if not is_anima_serve(pid):
            problems.append(f"{path}: process {pid} is not anima serve (stale pid file)")
            continue
        found.append(Instance(match["prefix"], pid, path))
    return found, problems


def claim(prefix: str) -> Path | None:
    """Write this process's pid file for ``prefix``; None (the caller warns) when another live
    anima already holds it, or when it cannot be written (OSError)."""
    path = pid_file(prefix)
    try:
        other = read_pid(path)
    except (OSError, ValueError):
        other = None
    if other is not None and other != os.getpid() and is_anima_serve(other):
        return None
    path.write_text(str(os.getpid()))
    return path


def release(path: Path) -> None:
    """Remove ``path`` if it is still this process's."""
    try:
        if read_pid(path) == os.getpid():
            path.unlink()
    except (OSError, ValueError):
        pass
