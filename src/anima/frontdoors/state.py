"""What every front door reports about the runtime: one snapshot, the same content everywhere.

MQTT publishes it as the retained state message; the web door serves it at ``GET /api/state``
and streams it on its WebSocket; ``anima record`` writes it. Loop statistics take percentiles
over thousands of ticks, so :class:`StateReader` computes them at most a few times a second.
"""

from __future__ import annotations

import threading
import time
from typing import TYPE_CHECKING

from anima.wire.jsontypes import JsonObject
from anima.wire.session import body_fields
from anima.wire.state import LoopState, RuntimeState

if TYPE_CHECKING:
    from anima.runtime import Runtime


def body_description(runtime: Runtime) -> JsonObject:
    """Channels with their limits and roles, and the named postures (sent once)."""
    return body_fields(runtime.body)


def animations_description(runtime: Runtime) -> JsonObject:
    """The library's gestures and gaze postures, by name."""
    lib = runtime.library
    return {"gestures": lib.gestures(), "postures": lib.postures()}


class StateReader:
    """State snapshots for many readers: :meth:`Runtime.state` on every read, its loop
    statistics recomputed at most ``stats_hz`` times a second."""

    def __init__(self, runtime: Runtime, *, stats_hz: float = 4.0) -> None:
        self.runtime = runtime
        self._period = 1.0 / stats_hz
        self._lock = threading.Lock()
        self._at = -1e9
        self._loop: LoopState | None = None

    def state(self) -> RuntimeState:
        now = time.monotonic()
        with self._lock:
            if self._loop is None or now - self._at >= self._period:
                self._loop = self.runtime.loop_state()
                self._at = now
            loop = self._loop
        return self.runtime.state(loop)  # everything else fresh on every read

    def frame(self) -> list[float]:
        """The last commanded channel values, rounded to what a display needs."""
        return [round(float(v), 2) for v in self.runtime.engine.last_frame]
