"""``anima serve`` as a subprocess, as a user starts it, with every wait bounded.

Its output (stdout and stderr together) is read by a thread into a queue, so waiting for a line
never blocks past its timeout, and what it printed is kept for the failure message::

    server = ServeProcess(["--config", "anima.yaml"], env={"ANIMA_WEB__PORT": "0"})
    try:
        server.wait_for(r"anima ready")
        ...
    finally:
        code = server.stop()  # SIGTERM: eases to rest; 0 when it exited cleanly
"""

from __future__ import annotations

import os
import queue
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

from anima import instances


class ServeProcess:
    """``python -m anima serve *args`` in this process's environment changed by ``env`` (a
    ``None`` value removes that variable)."""

    def __init__(
        self,
        args: Sequence[str] = (),
        *,
        env: Mapping[str, str | None] | None = None,
        cwd: Path | None = None,
    ) -> None:
        # faulthandler: a server that does not stop is asked, by SIGABRT, where each thread is
        full = dict(os.environ, PYTHONUNBUFFERED="1", PYTHONFAULTHANDLER="1")
        for key, value in (env or {}).items():
            if value is None:
                full.pop(key, None)
            else:
                full[key] = value
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "anima", "serve", *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            text=True,
            env=full,
            cwd=cwd,
        )
        self.lines: list[str] = []  # what it printed, as far as it was read
        self._queue: queue.Queue[str | None] = queue.Queue()
        self._pump = threading.Thread(target=self._read, name="anima-serve-output", daemon=True)
        self._pump.start()

    @property
    def pid(self) -> int:
        return self.proc.pid

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self._queue.put(line)
        self._queue.put(None)

    def wait_for(self, pattern: str, timeout: float = 60.0) -> str:
        """The next line matching the regular expression ``pattern``; AssertionError (with the
        output so far) when none came within ``timeout`` or the process ended."""
        end = time.monotonic() + timeout
        while (left := end - time.monotonic()) > 0:
            try:
                line = self._queue.get(timeout=left)
            except queue.Empty:
                break
            if line is None:
                break
            self.lines.append(line)
            if re.search(pattern, line):
                return line
        tail = "".join(self.lines[-40:])
        raise AssertionError(f"anima serve: {pattern!r} not seen within {timeout} s:\n{tail}")

    def stop(self, timeout: float = 15.0) -> int:
        """SIGTERM, then wait; the exit code. A server still running after ``timeout`` gets
        SIGABRT, so that faulthandler prints every thread's stack into :attr:`lines` (where it
        hung), then SIGKILL: -6 or -9."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            code = self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.send_signal(signal.SIGABRT)
            try:
                code = self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
                code = -9
        instances.forget(self.proc.pid)  # the pid file of a server that was killed
        self._pump.join(5)
        if not self._pump.is_alive() and self.proc.stdout is not None:
            self.proc.stdout.close()  # read to its end: an open pipe left behind is a leak
        while True:  # what it printed on the way out
            try:
                line = self._queue.get_nowait()
            except queue.Empty:
                break
            if line is None:
                break
            self.lines.append(line)
        return code
