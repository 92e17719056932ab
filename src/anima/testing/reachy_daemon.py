"""Pollen's own Reachy Mini daemon in its mockup simulation, on a free loopback port, for the
driver's tests and ``anima bench reachy``.

The daemon is ``reachy-mini-daemon`` from ``.venv-reachy`` (built by
``scripts/reachy-daemon/setup.sh``; ``make test`` builds it) or any other install named by
``ANIMA_REACHY_DAEMON``. It is started with the flags a robot-less machine needs (the mockup
simulation, no media, no wake-up or sleep moves, no datasets, 127.0.0.1 only), its telemetry
off, and is ready when ``GET /api/daemon/status`` says ``running``. :meth:`MockupDaemon.stop`
is Ctrl-C (the daemon's clean path), then SIGKILL for the whole process group.

``doa_file``: the daemon's ReSpeaker array replaced by a scripted one reading its direction of
arrival from that JSON file (``reachy_doa_shim.py``, run by the daemon's own interpreter).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import tempfile
import time
import urllib.request
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any

from anima.errors import DriverError
from anima.frontdoors.mqtt.broker import free_port as broker_free_port

VENV = ".venv-reachy"
FLAGS = (
    "--mockup-sim", "--headless", "--no-media", "--no-wake-up-on-start",
    "--no-goto-sleep-on-stop", "--no-preload-datasets", "--dataset-update-interval", "0",
)  # fmt: skip
QUIET = {"REACHY_MINI_TELEMETRY": "0", "DO_NOT_TRACK": "1", "HF_HUB_OFFLINE": "1"}


def find_daemon() -> Path | None:
    """``ANIMA_REACHY_DAEMON``, else ``.venv-reachy/bin/reachy-mini-daemon`` here or in the
    source checkout anima runs from; None when there is none."""
    named = os.environ.get("ANIMA_REACHY_DAEMON")
    if named:
        return Path(named)
    checkout = Path(__file__).resolve().parents[3]
    for root in (Path.cwd(), checkout):
        exe = root / VENV / "bin" / "reachy-mini-daemon"
        if exe.is_file():
            return exe
    return None


PORT_TRIES = 3  # starts on a new port when the one chosen was taken before the daemon bound it


class _PortTakenError(DriverError):
    """The daemon could not bind its port: another process took it first."""


def free_port() -> int:
    """A loopback port for the daemon: below the kernel's ephemeral range, so the connections
    made meanwhile cannot take it (:func:`anima.frontdoors.mqtt.broker.free_port`)."""
    return broker_free_port("127.0.0.1")


def stop_group(process: subprocess.Popen[bytes], timeout: float = 10.0) -> None:
    """SIGINT to the process group ``process`` leads (started with ``start_new_session``: the
    daemon's clean path), then SIGKILL if it has not exited within ``timeout``."""
    if process.poll() is not None:
        return
    try:
        os.killpg(process.pid, signal.SIGINT)
        process.wait(timeout)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(5)
    except ProcessLookupError:
        pass


class MockupDaemon:
    """One daemon process; ``start``, ``stop`` and ``restart`` (on the same port). ``command``
    runs it in place of ``executable`` (another interpreter's launcher: the anchor benchmark's),
    with ``flags`` in place of :data:`FLAGS` and ``env`` added to its environment."""

    def __init__(
        self,
        executable: Path,
        port: int = 0,
        *,
        ready_s: float = 60.0,
        doa_file: Path | None = None,
        command: Sequence[str] = (),
        flags: Sequence[str] = FLAGS,
        env: Mapping[str, str] | None = None,
    ) -> None:
        self.executable = executable
        self.doa_file = doa_file
        self.command = tuple(command) or (str(executable),)
        self.flags = tuple(flags)
        self.env = dict(env or {})
        self.port = port or free_port()
        # a port chosen here may be taken before the daemon binds it (free_port closes its
        # socket; the kernel may hand the number to any connection meanwhile): then another
        self._own_port = not port
        self.ready_s = ready_s
        self.process: subprocess.Popen[bytes] | None = None
        self._log = tempfile.NamedTemporaryFile(prefix="reachy-daemon-", suffix=".log")  # noqa: SIM115
        self.started_s = 0.0  # how long the last start took to be ready

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> MockupDaemon:
        """Start the daemon and wait until it runs; on a port this chose, one another process
        took first is replaced by a new one (up to :data:`PORT_TRIES` starts)."""
        for _ in range(PORT_TRIES - 1):
            try:
                return self._start()
            except _PortTakenError:
                if not self._own_port:
                    raise
                self.port = free_port()
        return self._start()

    def _start(self) -> MockupDaemon:
        begun = Path(self._log.name).stat().st_size  # this start's lines follow
        cmd = [*self.command, *self.flags, "--fastapi-host", "127.0.0.1"]
        cmd += ["--fastapi-port", str(self.port)]
        home = Path(tempfile.gettempdir()) / "anima-reachy-home"
        env = dict(os.environ, **QUIET, XDG_CONFIG_HOME=str(home), **self.env)
        if self.doa_file is not None:  # the same daemon, through the shim, by its own python
            shim = Path(__file__).with_name("reachy_doa_shim.py")
            cmd = [str(self.executable.with_name("python")), "-P", str(shim), *cmd[1:]]
            env["ANIMA_REACHY_DOA_FILE"] = str(self.doa_file)
        t0 = time.monotonic()
        self.process = subprocess.Popen(
            cmd, stdin=subprocess.DEVNULL, stdout=self._log, stderr=subprocess.STDOUT,
            start_new_session=True, env=env,
        )  # fmt: skip
        while time.monotonic() - t0 < self.ready_s:
            if self.process.poll() is not None:
                why = (f"the Reachy Mini daemon exited ({self.process.returncode}): "
                       f"{self.log_tail()}")  # fmt: skip
                self._log.flush()
                with open(self._log.name, "rb") as log:
                    log.seek(begun)
                    taken = b"address already in use" in log.read()
                raise _PortTakenError(why) if taken else DriverError(why)
            try:
                if self.status().get("state") == "running":
                    self.started_s = time.monotonic() - t0
                    return self
            except OSError:
                pass
            time.sleep(0.1)
        self.stop()
        raise DriverError(f"the Reachy Mini daemon was not running after {self.ready_s:g} s: "
                          f"{self.log_tail()}")  # fmt: skip

    def status(self) -> dict[str, Any]:
        return self.get("/api/daemon/status")

    def get(self, path: str) -> dict[str, Any]:
        with urllib.request.urlopen(self.url + path, timeout=2) as reply:
            data = json.loads(reply.read())
        if not isinstance(data, dict):
            raise OSError(f"{path}: not a JSON object")
        return data

    def stop(self, timeout: float = 10.0) -> None:
        p, self.process = self.process, None
        if p is not None:
            stop_group(p, timeout)

    def restart(self) -> None:
        """Stop and start again on the same port (a port taken meanwhile is an error)."""
        self.stop()
        self._start()

    def log_tail(self, lines: int = 15) -> str:
        self._log.flush()
        text = Path(self._log.name).read_text(errors="replace").splitlines()
        return " | ".join(text[-lines:])

    def __enter__(self) -> MockupDaemon:
        return self.start()

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()
        self._log.close()
