"""The link to a Reachy Mini through Pollen's SDK (``reachy-mini``, the ``reachy`` extra):
its ``ReachyMini`` client, on the daemon's WebSocket, with no camera or microphone.

Imported only when the reachy_mini driver connects: a missing SDK is one line with the install
hint, an unreachable daemon one line naming its address.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from anima.drivers.reachy_mini import Measured, Target
from anima.errors import DriverError, MissingDependencyError


class SdkLink:
    """:class:`~anima.drivers.reachy_mini.ReachyLink` over the SDK's ``ReachyMini``."""

    def __init__(self, host: str, port: int, *, timeout_s: float = 5.0) -> None:
        try:
            from reachy_mini import ReachyMini
        except ImportError as exc:
            raise MissingDependencyError("reachy-mini", "reachy") from exc
        local = host in ("127.0.0.1", "localhost", "::1")
        try:
            self._mini: Any = ReachyMini(
                host=host,
                port=port,
                connection_mode="localhost_only" if local else "network",
                media_backend="no_media",
                timeout=timeout_s,
            )
        except Exception as exc:  # the SDK's own errors: refused, timed out, a bad answer
            raise DriverError(
                f"reachy_mini: no Reachy Mini daemon answers at {host}:{port} "
                f"({type(exc).__name__}: {exc}); start it (reachy-mini-daemon, or "
                "reachy-mini-daemon --mockup-sim for its simulation) or set driver.host/port"
            ) from exc

    def set_target(self, target: Target) -> None:
        self._mini.set_target(
            head=target.head, antennas=list(target.antennas), body_yaw=target.body_yaw
        )

    def read(self) -> Measured | None:
        head = np.asarray(self._mini.get_current_head_pose(), dtype=float)
        joints, antennas = self._mini.get_current_joint_positions()
        right, left = (float(a) for a in antennas)
        return Measured(time.monotonic(), head, (right, left), float(joints[0]))

    def close(self) -> None:
        self._mini.client.disconnect()
