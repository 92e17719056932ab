"""The processes side_by_side.py starts, each stopped on the way out (also on Ctrl-C or error).

Every child runs in a session of its own, so Ctrl-C reaches only this process, which then stops
each child it started by its process group: Ctrl-C (SIGINT, the daemon's clean path), then
SIGKILL after a timeout.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import tempfile
import time
import urllib.request
from pathlib import Path
from types import TracebackType
from typing import Any

HERE = Path(__file__).resolve().parent
DAEMON_FLAGS = (
    "--mockup-sim", "--headless", "--deactivate-audio", "--no-wake-up-on-start",
    "--no-goto-sleep-on-stop", "--no-preload-datasets", "--dataset-update-interval", "0",
    "--localhost-only", "--fastapi-host", "127.0.0.1",
)  # fmt: skip
QUIET = {"REACHY_MINI_TELEMETRY": "0", "DO_NOT_TRACK": "1", "HF_HUB_OFFLINE": "1"}


class HarnessError(Exception):
    """Something the harness needs is missing or failed; its message is one line."""


def free_port() -> int:
    """A TCP port on 127.0.0.1 nothing listens on now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def stop_group(process: subprocess.Popen[bytes], timeout: float = 10.0) -> None:
    """Ctrl-C to the child's process group, then SIGKILL if it has not exited in ``timeout``."""
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


def run_json(cmd: list[str], timeout: float, env: dict[str, str] | None = None) -> dict[str, Any]:
    """Run ``cmd`` to its end (at most ``timeout`` s) and parse the JSON object it prints."""
    with tempfile.TemporaryFile() as err:
        process = subprocess.Popen(
            cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=err,
            start_new_session=True, env=env,
        )  # fmt: skip
        try:
            out, _ = process.communicate(timeout=timeout)
        except subprocess.TimeoutExpired as exc:
            raise HarnessError(f"{Path(cmd[1]).name}: still running after {timeout:g} s") from exc
        finally:
            stop_group(process)
        if process.returncode != 0:
            err.seek(0)
            tail = err.read().decode(errors="replace").strip().splitlines()[-1:]
            raise HarnessError(f"{Path(cmd[1]).name} exited {process.returncode}: {tail}")
    text = out.decode()
    try:  # the object may span lines (anima's is indented); anything before it is not JSON
        data = json.loads(text[text.index("{") :])
    except ValueError as exc:
        raise HarnessError(f"{Path(cmd[1]).name}: printed no JSON object: {text[-200:]!r}") from exc
    if not isinstance(data, dict):
        raise HarnessError(f"{Path(cmd[1]).name}: printed no JSON object")
    return data


class MockupDaemon:
    """Pollen's reachy-mini 1.2.11 daemon in its mockup simulation (no MuJoCo), run by the
    anchor's interpreter through daemon_main.py: HTTP and Zenoh on free ports of 127.0.0.1."""

    def __init__(self, python: Path, ready_s: float = 30.0) -> None:
        self.python = python
        self.ready_s = ready_s
        self.http_port = free_port()
        self.zenoh_port = free_port()
        self.process: subprocess.Popen[bytes] | None = None
        self._log = tempfile.NamedTemporaryFile(prefix="anchor-daemon-", suffix=".log")  # noqa: SIM115  (closed in __exit__)

    def __enter__(self) -> MockupDaemon:
        cmd = [str(self.python), str(HERE / "daemon_main.py"), *DAEMON_FLAGS]
        cmd += ["--fastapi-port", str(self.http_port)]
        env = dict(os.environ, **QUIET, ANCHOR_ZENOH_PORT=str(self.zenoh_port))
        self.process = subprocess.Popen(
            cmd, stdin=subprocess.DEVNULL, stdout=self._log, stderr=subprocess.STDOUT,
            start_new_session=True, env=env,
        )  # fmt: skip
        self._wait_running()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self.process is not None:
            stop_group(self.process)
        self._log.close()

    def _wait_running(self) -> None:
        assert self.process is not None
        deadline = time.monotonic() + self.ready_s
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise HarnessError(
                    f"the anchor's daemon exited ({self.process.returncode}): {self.log_tail()}"
                )
            try:
                if self._status().get("state") == "running":
                    return
            except OSError:
                pass
            time.sleep(0.1)
        raise HarnessError(
            f"the anchor's daemon was not running after {self.ready_s:g} s: {self.log_tail()}"
        )

    def _status(self) -> dict[str, Any]:
        url = f"http://127.0.0.1:{self.http_port}/api/daemon/status"
        with urllib.request.urlopen(url, timeout=2) as reply:
            data = json.loads(reply.read())
        return data if isinstance(data, dict) else {}

    def log_tail(self, lines: int = 3) -> str:
        self._log.flush()
        text = Path(self._log.name).read_text(errors="replace").splitlines()
        return " | ".join(text[-lines:])
