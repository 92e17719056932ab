"""The processes side_by_side.py starts, each stopped on the way out (also on Ctrl-C or error).

Every child runs in a session of its own, so Ctrl-C reaches only this process, which then stops
each child it started by its process group: Ctrl-C (SIGINT, the daemon's clean path), then
SIGKILL after a timeout.
"""

from __future__ import annotations

import json
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from anima.testing.reachy_daemon import MockupDaemon, free_port, stop_group

HERE = Path(__file__).resolve().parent
DAEMON_FLAGS = (  # reachy-mini 1.2.11's (anima's harness adds --fastapi-host and --fastapi-port)
    "--mockup-sim", "--headless", "--deactivate-audio", "--no-wake-up-on-start",
    "--no-goto-sleep-on-stop", "--no-preload-datasets", "--dataset-update-interval", "0",
    "--localhost-only",
)  # fmt: skip


class HarnessError(Exception):
    """Something the harness needs is missing or failed; its message is one line."""


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


class AnchorDaemon(MockupDaemon):
    """Pollen's reachy-mini 1.2.11 daemon in its mockup simulation (no MuJoCo), run by the
    anchor's interpreter through daemon_main.py: anima's test harness for the daemon
    (:class:`anima.testing.reachy_daemon.MockupDaemon`), with its Zenoh link on a free port of
    127.0.0.1 too (``zenoh_port``, for the anchor's loop)."""

    def __init__(self, python: Path, ready_s: float = 30.0) -> None:
        self.zenoh_port = free_port()
        super().__init__(
            python, ready_s=ready_s, command=(str(python), str(HERE / "daemon_main.py")),
            flags=DAEMON_FLAGS, env={"ANCHOR_ZENOH_PORT": str(self.zenoh_port)},
        )  # fmt: skip
