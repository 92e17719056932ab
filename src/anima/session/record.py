"""Record a session: the WebSocket's messages (hello, state, events) to a JSON Lines file.

Each line is one message as the dashboard receives it, plus ``rt``: seconds since the recording
started, on the recorder's clock, so events without an engine time still line up with frames.
The first line is the ``hello`` (channels with their limits); see docs/web.md.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from pathlib import Path
from typing import IO, TYPE_CHECKING

from anima.errors import AnimaError, MissingDependencyError
from anima.wire.jsontypes import JsonObject

if TYPE_CHECKING:
    from anima.config import WebConfig
    from anima.runtime import Runtime

log = logging.getLogger(__name__)


class SessionWriter:
    """Appends messages with their ``rt`` to a JSON Lines file; thread-safe."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._file: IO[str] | None = None
        self._lock = threading.Lock()
        self._t0 = time.monotonic()
        self.states = 0
        self.events = 0

    def __enter__(self) -> SessionWriter:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._file = self.path.open("w", encoding="utf-8")
        self._t0 = time.monotonic()
        return self

    def __exit__(self, *_exc: object) -> None:
        with self._lock:
            if self._file is not None:
                self._file.close()
                self._file = None

    def write(self, message: JsonObject) -> None:
        kind = message.get("type")
        line = json.dumps(
            {**message, "rt": round(time.monotonic() - self._t0, 4)}, separators=(",", ":")
        )
        with self._lock:
            if self._file is None:
                return
            self._file.write(line + "\n")
            if kind == "state":
                self.states += 1
            elif kind == "event":
                self.events += 1


def dashboard_url(web: WebConfig) -> str:
    """Where the config's ``anima serve`` serves its dashboard (a wildcard host: this machine)."""
    host = {"0.0.0.0": "127.0.0.1", "::": "::1", "": "127.0.0.1"}.get(web.host, web.host)
    if ":" in host:
        host = f"[{host}]"
    return f"http://{host}:{web.port}/"


def ws_url(url: str, token: str | None) -> str:
    """``http://host:port/`` (or ``ws://…``) → the dashboard's ``ws://host:port/ws``."""
    base = url.rstrip("/")
    if base.startswith("http"):
        base = "ws" + base[4:]
    elif not base.startswith("ws"):
        base = "ws://" + base
    if not base.endswith("/ws"):
        base += "/ws"
    return base + (f"?token={token}" if token else "")


def record_remote(url: str, path: Path, seconds: float, token: str | None = None) -> SessionWriter:
    """Record the running runtime's WebSocket at ``url`` for ``seconds``."""
    try:
        from websockets.exceptions import ConnectionClosed, InvalidStatus
        from websockets.sync.client import connect
    except ImportError as exc:
        raise MissingDependencyError("websockets", "web") from exc
    target = ws_url(url, token)
    try:
        ws = connect(target, open_timeout=5)
    except (OSError, InvalidStatus, TimeoutError) as exc:
        raise AnimaError(
            f"cannot reach the dashboard at {target.split('?')[0]}: {exc} (is anima serve "
            "running? --local records in-process)"
        ) from exc
    with ws, SessionWriter(path) as writer:
        end = time.monotonic() + seconds
        while (left := end - time.monotonic()) > 0:
            try:
                text = ws.recv(timeout=left)
            except TimeoutError:
                break
            except ConnectionClosed:
                log.warning("the dashboard closed the connection: recording ends early")
                break
            writer.write(json.loads(text))
    return writer


def record_local(runtime: Runtime, path: Path, seconds: float, hz: float = 30.0) -> SessionWriter:
    """Record a started runtime in-process: the same messages, without a server."""
    from anima.events import Event
    from anima.frontdoors.state import StateReader, animations_description, body_description
    from anima.wire import PAYLOAD_VERSION
    from anima.wire.events import event_fields

    reader = StateReader(runtime)
    with SessionWriter(path) as writer:
        writer.write(
            {
                "v": PAYLOAD_VERSION,
                "type": "hello",
                "updates_hz": hz,
                "body": body_description(runtime),
                "animations": animations_description(runtime),
            }
        )

        def on_event(event: Event) -> None:
            writer.write({"v": PAYLOAD_VERSION, "type": "event", **event_fields(event)})

        unsubscribe = runtime.events.subscribe(on_event)
        try:
            period = 1.0 / hz
            start = time.monotonic()
            n = 0
            while (now := time.monotonic()) < start + seconds:
                writer.write(
                    {
                        "v": PAYLOAD_VERSION,
                        "type": "state",
                        **reader.state().to_json(),
                        "values": reader.frame(),
                    }
                )
                n += 1
                time.sleep(max(0.0, start + n * period - now))
        finally:
            unsubscribe()
    return writer
