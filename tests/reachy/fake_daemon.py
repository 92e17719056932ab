"""A stand-in for Pollen's Reachy Mini daemon on 127.0.0.1: its ``/ws/sdk`` WebSocket with the
messages of ``reachy_mini.io.protocol`` (``set_full_target`` in; ``head_pose`` and
``joint_positions`` out at 50 Hz, reporting the newest target). The real daemon is tried in
``test_reachy_daemon.py`` where it is installed."""

from __future__ import annotations

import json
import threading
import time
from typing import Any

from websockets.sync.server import Server, ServerConnection, serve

IDENTITY = [[1.0, 0.0, 0.0, 0.0], [0.0, 1.0, 0.0, 0.0], [0.0, 0.0, 1.0, 0.0], [0.0, 0.0, 0.0, 1.0]]


class FakeDaemon:
    def __init__(self, port: int = 0) -> None:
        self.targets: list[dict[str, Any]] = []
        self.head: list[list[float]] = IDENTITY
        self.antennas = [0.0, 0.0]
        self.body_yaw = 0.0
        self._open: set[ServerConnection] = set()
        self._server: Server = serve(self._handle, "127.0.0.1", port)
        self.port = int(self._server.socket.getsockname()[1])
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    def _handle(self, ws: ServerConnection) -> None:
        if ws.request is None or ws.request.path != "/ws/sdk":
            ws.close(1008, "not /ws/sdk")
            return
        stop = threading.Event()
        self._open.add(ws)

        def publish() -> None:
            while not stop.wait(0.02):  # 50 Hz, as the daemon
                try:
                    ws.send(json.dumps({"type": "head_pose", "head_pose": self.head}))
                    ws.send(
                        json.dumps(
                            {
                                "type": "joint_positions",
                                "head_joint_positions": [self.body_yaw] + [0.0] * 6,
                                "antennas_joint_positions": self.antennas,
                            }
                        )
                    )
                except Exception:
                    return

        threading.Thread(target=publish, daemon=True).start()
        try:
            for raw in ws:
                message = json.loads(raw)
                if message.get("type") == "set_full_target":
                    message["at"] = time.monotonic()
                    self.targets.append(message)
                    flat = message["head"]
                    self.head = [flat[i : i + 4] for i in range(0, 16, 4)]
                    self.antennas = list(message["antennas"])
                    self.body_yaw = float(message["body_yaw"])
        finally:
            stop.set()
            self._open.discard(ws)

    def stop(self) -> None:
        """Go away as the daemon does on a restart: each client's socket closed with 1012."""
        for ws in list(self._open):
            ws.close(1012, "service restart")
        self._server.shutdown()
        self._thread.join(5)
