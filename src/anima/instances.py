"""Finding running `anima serve` instances: one pid file per robot (its MQTT prefix).

``anima serve`` writes ``$XDG_RUNTIME_DIR/anima-<uid>-<prefix>.pid`` (the temp folder when
``XDG_RUNTIME_DIR`` is unset); ``anima animations reload`` reads them, so two robots served from
one account never signal each other's runtime. A pid file is trusted only while the process it
names is still an ``anima serve``: a stale one may name an unrelated process by now.

Next to it, ``anima-<uid>-<prefix>.json`` records what others need to reach the instance — the
MQTT broker it serves on (``{"pid": …, "prefix": …, "broker": "127.0.0.1:1884"}``), which
``anima fleet`` looks at when no ``--broker`` is given: the broker ``anima serve`` started may
listen on another port than 1883 (taken). Both files go at a clean stop (``release``);
``forget`` removes those of a process that ended without one (a test's killed server), and each
``claim`` those of instances that are gone.
"""

from __future__ import annotations

import json
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


def state_file(pid_path: Path) -> Path:
    """The instance's state file, next to its pid file."""
    return pid_path.with_suffix(".json")


@dataclass(frozen=True)
class Instance:
    prefix: str  # as in the file name
    pid: int
    path: Path

    @property
    def broker(self) -> str | None:
        """The MQTT broker it serves on (HOST:PORT), when its state file says so."""
        try:
            data = json.loads(state_file(self.path).read_text())
        except (OSError, ValueError):
            return None
        broker = data.get("broker") if isinstance(data, dict) else None
        return broker if isinstance(broker, str) and data.get("pid") == self.pid else None


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


def _stale() -> list[Instance]:
    """This user's pid files that name a process that is not an ``anima serve`` (any more)."""
    found = []
    for path in folder().glob(f"anima-{os.getuid()}-*.pid"):
        match = _NAME.match(path.name)
        try:
            pid = read_pid(path)
        except (OSError, ValueError):
            continue
        if match is not None and not is_anima_serve(pid):
            found.append(Instance(match["prefix"], pid, path))
    return found


def claim(prefix: str, *, broker: str | None = None) -> Path | None:
    """Write this process's pid file for ``prefix`` (and its state file: the MQTT ``broker``
    it serves on); None (the caller warns) when another live anima already holds it, or when
    it cannot be written (OSError)."""
    path = pid_file(prefix)
    try:
        other = read_pid(path)
    except (OSError, ValueError):
        other = None
    if other is not None and other != os.getpid() and is_anima_serve(other):
        return None
    for stale in _stale():  # left by instances killed before they could remove them
        forget(stale.pid, [stale.path])
    path.write_text(str(os.getpid()))
    state = {"pid": os.getpid(), "prefix": prefix, "broker": broker}
    state_file(path).write_text(json.dumps(state))
    return path


def release(path: Path) -> None:
    """Remove ``path`` (and its state file) if it is still this process's."""
    forget(os.getpid(), [path])


def forget(pid: int, paths: list[Path] | None = None) -> None:
    """Remove the pid files (and state files) that name ``pid``, a process that has ended or
    is ending: by default every one of this user's."""
    uid = os.getuid()
    for path in paths if paths is not None else folder().glob(f"anima-{uid}-*.pid"):
        try:
            if read_pid(path) != pid:
                continue
            state_file(path).unlink(missing_ok=True)
            path.unlink()
        except (OSError, ValueError):
            pass
