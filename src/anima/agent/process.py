"""External programs for actions, each in its own process group, never left running.

The seed starts detectors with ``subprocess.Popen`` and kills their tree on interrupt. Here each
program gets a new session (so a process group of its own, with every child and grandchild in
it), and :meth:`ManagedProcess.stop` ends the whole group: SIGTERM, then SIGKILL for whatever is
still running after ``term_timeout_s``. A waiter thread, owned and joined by ``stop``, turns the
program's exit into an event, so actions wait for "exited or interrupted" without polling.

A program that starts its own session (``setsid``) leaves the group and cannot be followed; the
usual daemons do that, the detectors and demos an action starts do not.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import IO

from anima.errors import EngineStateError

log = logging.getLogger(__name__)

_PROC = Path("/proc")


KILL_WAIT_S = 2.0  # longest wait for a SIGKILLed group to be gone


def _wait_for_empty_group(pgid: int, deadline: float) -> bool:
    """Poll until process group ``pgid`` has no live member (True) or ``deadline`` (False)."""
    pause = 0.002
    while group_members(pgid):
        if time.monotonic() >= deadline:
            return False
        time.sleep(pause)
        pause = min(pause * 2, 0.05)
    return True


def group_members(pgid: int) -> list[int]:
    """Live (non-zombie) processes in process group ``pgid``.

    Reads ``/proc`` where there is one: a zombie left for an init that does not reap still
    answers ``kill(0)``, but it runs nothing. Elsewhere, ``killpg(pgid, 0)`` decides.
    """
    if not _PROC.is_dir():
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return []
        except PermissionError:
            pass
        return [pgid]
    members = []
    for entry in _PROC.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue  # it ended while we looked
        # pid (comm) state ppid pgrp …; comm may hold spaces and parentheses
        fields = stat[stat.rfind(")") + 2 :].split()
        if len(fields) > 2 and int(fields[2]) == pgid and fields[0] not in ("Z", "X"):
            members.append(int(entry.name))
    return members


class ManagedProcess:
    """One external program and its descendants, stopped as a group."""

    def __init__(
        self,
        argv: Sequence[str],
        *,
        cwd: str | Path | None = None,
        env: Mapping[str, str] | None = None,
        stdout: int | IO[bytes] | None = subprocess.DEVNULL,
        stderr: int | IO[bytes] | None = subprocess.DEVNULL,
        term_timeout_s: float = 2.0,
    ) -> None:
        """Nothing starts here; :meth:`start` (or ``with``) does."""
        if not argv:
            raise ValueError("argv must name a program")
        self.argv = list(argv)
        self._cwd = cwd
        self._env = dict(env) if env is not None else None
        self._stdout = stdout
        self._stderr = stderr
        self.term_timeout_s = term_timeout_s
        self._popen: subprocess.Popen[bytes] | None = None
        self._waiter: threading.Thread | None = None
        self.exited = threading.Event()  # set when the program itself has exited
        self._on_exit: list[Callable[[], None]] = []
        self._lock = threading.Lock()

    # ------------------------------------------------------------------ lifecycle
    def start(self) -> ManagedProcess:
        if self._popen is not None:
            raise EngineStateError(f"{self.argv[0]} already started")
        self._popen = subprocess.Popen(
            self.argv,
            cwd=self._cwd,
            env=self._env,
            stdin=subprocess.DEVNULL,
            stdout=self._stdout,
            stderr=self._stderr,
            start_new_session=True,  # its own session and process group: pgid == pid
        )
        self._waiter = threading.Thread(
            target=self._wait, name=f"anima-proc-{self._popen.pid}", daemon=True
        )
        self._waiter.start()
        log.debug("started %s (pid %d)", self.argv, self._popen.pid)
        return self

    def _wait(self) -> None:
        assert self._popen is not None
        self._popen.wait()
        with self._lock:
            self.exited.set()
            callbacks = list(self._on_exit)
        for cb in callbacks:
            try:
                cb()
            except Exception:
                log.exception("exit callback of %s failed", self.argv[0])

    def on_exit(self, callback: Callable[[], None]) -> None:
        """Call ``callback`` (on the waiter thread) when the program exits; now if it has."""
        with self._lock:
            if not self.exited.is_set():
                self._on_exit.append(callback)
                return
        callback()

    @property
    def pid(self) -> int | None:
        return None if self._popen is None else self._popen.pid

    @property
    def returncode(self) -> int | None:
        return None if self._popen is None else self._popen.returncode

    @property
    def running(self) -> bool:
        """The program or any process of its group is still running."""
        pid = self.pid
        return pid is not None and bool(group_members(pid))

    def terminate(self) -> None:
        """Send SIGTERM to the whole group, without waiting (safe from any thread, any time)."""
        self._signal(signal.SIGTERM)

    def _signal(self, sig: signal.Signals) -> None:
        pid = self.pid
        if pid is None:
            return
        with contextlib.suppress(ProcessLookupError):  # the whole group is gone already
            os.killpg(pid, sig)

    def stop(self, timeout: float | None = None) -> int | None:
        """End the program and all its descendants; returns its exit code.

        SIGTERM to the group; once the program has exited and the group is empty, done; after
        ``timeout`` (default ``term_timeout_s``) SIGKILL whatever is left. Idempotent.
        """
        popen = self._popen
        if popen is None:
            return None
        timeout = self.term_timeout_s if timeout is None else timeout
        deadline = time.monotonic() + timeout
        if group_members(popen.pid) or popen.poll() is None:
            self._signal(signal.SIGTERM)
            self.exited.wait(max(0.0, deadline - time.monotonic()))
            # descendants are not our children: no exit event for them, so look until the
            # deadline (this is the clean-up path, not the interrupt path, which signals at once)
            _wait_for_empty_group(popen.pid, deadline)
            if group_members(popen.pid) or popen.poll() is None:
                log.warning("%s did not end within %g s: SIGKILL", self.argv[0], timeout)
                self._signal(signal.SIGKILL)
                # SIGKILL is delivered asynchronously: the members are gone a moment later
                if not _wait_for_empty_group(popen.pid, time.monotonic() + KILL_WAIT_S):
                    left = group_members(popen.pid)
                    log.warning("%s: processes %s outlived SIGKILL", self.argv[0], left)
        code = popen.wait()
        waiter = self._waiter
        if waiter is not None:
            waiter.join(1.0)
            self._waiter = None
        return code

    def __enter__(self) -> ManagedProcess:
        return self.start() if self._popen is None else self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()
