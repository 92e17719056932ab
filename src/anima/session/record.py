"""Record a session: the WebSocket's messages (hello, state, events) to a JSON Lines file,
and every frame the loop sent.

Each line is one message as the dashboard receives it, plus ``rt``: seconds since the recording
started, on the recorder's clock, so events without an engine time still line up with frames.
The first line is the ``hello`` (channels with their limits); see docs/web.md. The state
messages come at the dashboard's 30 Hz; every commanded frame (100 a second) is a ``frame``
line, ``{"v":1,"type":"frame","t":…,"rt":…,"values":[…]}``: over the WebSocket from the
dashboard's ``frames`` messages (``/ws?frames=1``), in-process from an engine frame tap.
"""

from __future__ import annotations

import json
import logging
import queue
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import IO, TYPE_CHECKING

from anima.errors import AnimaError, MissingDependencyError
from anima.wire.jsontypes import JsonObject

if TYPE_CHECKING:
    from anima.config import WebConfig
    from anima.drivers.base import Frame
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
        self.frames = 0  # every commanded frame (``frame`` lines)
        self._first: tuple[float, float] | None = None  # (engine t, rt) of the first frame

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

    def frame(self, t: float, values: Sequence[float]) -> None:
        """One commanded frame at engine time ``t``: its ``rt`` is the first frame's arrival
        plus the engine time since that frame (frames come in bursts; their times do not)."""
        if self._first is None:
            self._first = (t, time.monotonic() - self._t0)
        t_first, rt_first = self._first
        line = json.dumps(
            {
                "v": 1,
                "type": "frame",
                "t": round(t, 6),
                "rt": round(rt_first + t - t_first, 4),
                "values": [round(float(v), 4) for v in values],
            },
            separators=(",", ":"),
        )
        with self._lock:
            if self._file is None:
                return
            self._file.write(line + "\n")
            self.frames += 1

    def frames_message(self, message: JsonObject) -> None:
        """The dashboard's ``frames`` message: a ``frame`` line for each."""
        ts, values = message.get("t"), message.get("values")
        if not isinstance(ts, list) or not isinstance(values, list):
            log.warning("a frames message without t and values: skipped")
            return
        for t, row in zip(ts, values, strict=False):
            if isinstance(t, int | float) and isinstance(row, list):
                self.frame(float(t), [float(v) for v in row if isinstance(v, int | float)])


def dashboard_url(web: WebConfig) -> str:
    """Where the config's ``anima serve`` serves its dashboard (a wildcard host: this machine)."""
    host = {"0.0.0.0": "127.0.0.1", "::": "::1", "": "127.0.0.1"}.get(web.host, web.host)
    if ":" in host:
        host = f"[{host}]"
    return f"http://{host}:{web.port}/"


def ws_url(url: str, token: str | None, *, frames: bool = False) -> str:
    """``http://host:port/`` (or ``ws://…``) → the dashboard's ``ws://host:port/ws`` (with
    ``frames=1``: every commanded frame too)."""
    base = url.rstrip("/")
    if base.startswith("http"):
        base = "ws" + base[4:]
    elif not base.startswith("ws"):
        base = "ws://" + base
    if not base.endswith("/ws"):
        base += "/ws"
    query = [f"token={token}"] if token else []
    if frames:
        query.append("frames=1")
    return base + ("?" + "&".join(query) if query else "")


def record_remote(url: str, path: Path, seconds: float, token: str | None = None) -> SessionWriter:
    """Record the running runtime's WebSocket at ``url`` for ``seconds``."""
    try:
        from websockets.exceptions import ConnectionClosed, InvalidStatus
        from websockets.sync.client import connect
    except ImportError as exc:
        raise MissingDependencyError("websockets", "web") from exc
    target = ws_url(url, token, frames=True)
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
            message = json.loads(text)
            if isinstance(message, dict) and message.get("type") == "frames":
                writer.frames_message(message)
            else:
                writer.write(message)
    if writer.frames == 0 and writer.states:
        log.warning("the dashboard sent no frames (an older anima): its state messages only")
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
        sent: queue.SimpleQueue[Frame] = queue.SimpleQueue()  # the motion thread only puts
        runtime.engine.set_frame_tap(LOCAL_TAP, sent.put)
        try:
            period = 1.0 / hz
            start = time.monotonic()
            n = 0
            while (now := time.monotonic()) < start + seconds:
                _drain(sent, writer)
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
            runtime.engine.remove_frame_tap(LOCAL_TAP)
            unsubscribe()
            _drain(sent, writer)
    return writer


LOCAL_TAP = "record-local"


def _drain(sent: queue.SimpleQueue[Frame], writer: SessionWriter) -> None:
    while True:
        try:
            frame = sent.get_nowait()
        except queue.Empty:
            return
        writer.frame(frame.t, frame.values.tolist())
