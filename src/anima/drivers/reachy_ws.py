"""The link to a Reachy Mini daemon over its own WebSocket protocol (``driver.link:
websocket``, the default): what Pollen's SDK sends, with no SDK installed.

The daemon (``reachy-mini-daemon``, 1.5 and later) serves ``ws://HOST:PORT/ws/sdk`` with JSON
messages (``reachy_mini.io.protocol``): a ``set_full_target`` command (the head's 4×4 pose as 16
floats, row-major; ``antennas`` [right, left] and ``body_yaw`` in radians) and, from the daemon,
``head_pose`` and ``joint_positions`` at 50 Hz and ``daemon_status`` each second. A thread
reads them and keeps the newest. Pollen's SDK cannot be installed next to anima's own pins (it
pins onnxruntime 1.27 and huggingface-hub < 2, and needs PyGObject): docs/reachy-mini.md.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from typing import Any

import numpy as np

from anima.drivers.reachy_mini import Measured, Target
from anima.errors import DriverError, MissingDependencyError

log = logging.getLogger(__name__)

PATH = "/ws/sdk"


class WebSocketLink:
    """:class:`~anima.drivers.reachy_mini.ReachyLink` on the daemon's ``/ws/sdk``."""

    def __init__(self, host: str, port: int, *, timeout_s: float = 5.0) -> None:
        try:
            from websockets.sync.client import connect
        except ImportError as exc:  # the web extra's
            raise MissingDependencyError("websockets", "reachy") from exc
        self.url = f"ws://{host}:{port}{PATH}"
        try:
            self._ws: Any = connect(
                self.url, open_timeout=timeout_s, close_timeout=1.0, compression=None
            )
        except Exception as exc:  # refused, timed out, not a WebSocket
            raise DriverError(
                f"reachy_mini: no Reachy Mini daemon answers at {self.url} "
                f"({type(exc).__name__}: {exc}); start it (reachy-mini-daemon, or "
                "reachy-mini-daemon --mockup-sim --no-media for its simulation) or set "
                "driver.host and driver.port"
            ) from exc
        self._lock = threading.Lock()
        self._head: np.ndarray[Any, np.dtype[np.float64]] | None = None
        self._antennas: tuple[float, float] | None = None
        self._body_yaw: float | None = None
        self._at = 0.0
        self._error: BaseException | None = None
        self._reader = threading.Thread(target=self._read, name="anima-reachy-ws", daemon=True)
        self._reader.start()

    def set_target(self, target: Target) -> None:
        if self._error is not None:
            raise ConnectionError(f"the daemon's WebSocket closed: {self._error}")
        message = {
            "type": "set_full_target",
            "head": [float(v) for v in target.head.reshape(-1)],
            "antennas": [float(target.antennas[0]), float(target.antennas[1])],
            "body_yaw": float(target.body_yaw),
        }
        self._ws.send(json.dumps(message))

    def read(self) -> Measured | None:
        with self._lock:
            if self._head is None or self._antennas is None:
                return None
            return Measured(self._at, self._head, self._antennas, self._body_yaw)

    def close(self) -> None:
        try:
            self._ws.close()
        finally:
            self._reader.join(2.0)

    def _joints(self, message: dict[str, object]) -> None:
        """Antennas [right, left], and the body's yaw: the first of the head's 7 joints."""
        antennas = message.get("antennas_joint_positions")
        head = message.get("head_joint_positions")
        try:
            pair = (float(antennas[0]), float(antennas[1]))  # type: ignore[index]
            yaw = float(head[0]) if isinstance(head, list) and head else None
        except (TypeError, ValueError, IndexError, KeyError):
            return  # a message of another shape: read past it
        with self._lock:
            self._antennas, self._body_yaw = pair, yaw

    def _read(self) -> None:
        try:
            for raw in self._ws:
                try:
                    message = json.loads(raw)
                except ValueError:
                    continue
                kind = message.get("type") if isinstance(message, dict) else None
                if kind == "head_pose":
                    head = np.asarray(message.get("head_pose"), dtype=float)
                    if head.shape == (4, 4) and np.isfinite(head).all():
                        with self._lock:
                            self._head, self._at = head, time.monotonic()
                elif kind == "joint_positions":
                    self._joints(message)
        except Exception as exc:  # the connection closed or broke: the next send says so
            self._error = exc
        else:
            self._error = ConnectionError("closed by the daemon")
