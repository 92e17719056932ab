"""``anima serve`` started for the budget: default config, its own free ports and MQTT prefix.

Every ``ANIMA_*`` variable of the caller's environment is removed and the process runs in an
empty directory, so "defaults" is the shipped configuration, not whatever the shell had set. The
web door and the broker get free ports and the topics a prefix of their own, so a robot already
running on this machine is neither disturbed nor measured.

The first tick: ``anima serve`` prints a line starting ``anima moving:`` at its first tick; a
version that does not print one prints ``anima ready`` when everything has started (then the
ready line is the first tick's stand-in, and the report says so).
"""

from __future__ import annotations

import os
import re
import socket
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from anima.testing.serve import ServeProcess

MOVING = "anima moving:"
READY = "anima ready"
AGENT = "anima agent:"
_FIRST = re.compile(rf"^(?:{MOVING}|{READY})")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def start_serve(
    workdir: Path, extra: Sequence[str] = (), *, status_interval_s: float | None = None
) -> ServeProcess:
    """``anima serve`` with default config on free ports and a prefix of its own, plus
    ``extra`` arguments; ``status_interval_s``: its status line's period instead of the
    default (the line only: a quick run reads the loop's health sooner)."""
    env: dict[str, str | None] = {k: None for k in os.environ if k.startswith("ANIMA_")}
    if status_interval_s is not None:
        env["ANIMA_SERVE__STATUS_INTERVAL_S"] = f"{status_interval_s:g}"
    args = [
        "--web-port", str(free_port()),
        "--mqtt-port", str(free_port()),
        "--prefix", f"budget{os.getpid()}x{free_port()}",
        *extra,
    ]  # fmt: skip
    return ServeProcess(args, env=env, cwd=workdir)


@dataclass(frozen=True, kw_only=True)
class Started:
    """How one ``anima serve`` came up, seconds from the spawn."""

    first_tick_s: float  # spawn → the first-tick line
    first_tick_line: str  # which line that was: MOVING, or READY when there was none
    ready_s: float  # spawn → "anima ready"


def wait_started(server: ServeProcess, spawned: float, timeout: float) -> Started:
    """Wait for the first-tick line, then for ``anima ready`` (``spawned``: time.monotonic()
    just before the process was spawned)."""
    first = server.wait_for(_FIRST.pattern, timeout)
    first_s = time.monotonic() - spawned
    if first.startswith(MOVING):
        server.wait_for(f"^{READY}", timeout)
        return Started(
            first_tick_s=first_s,
            first_tick_line=MOVING,
            ready_s=time.monotonic() - spawned,
        )
    return Started(first_tick_s=first_s, first_tick_line=READY, ready_s=first_s)


def stop_serve(server: ServeProcess) -> int:
    try:
        return server.stop(15.0)
    finally:
        if server.proc.poll() is None:
            server.proc.kill()
            server.proc.wait()
