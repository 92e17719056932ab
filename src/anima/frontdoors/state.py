"""What every front door reports about the runtime: one snapshot, the same content everywhere.

MQTT publishes it as the retained state message; the web door serves it at ``GET /api/state``
and streams it on its WebSocket; ``anima record`` writes it. Loop statistics take percentiles
over thousands of ticks, so :class:`StateReader` computes them at most a few times a second.
"""

from __future__ import annotations

import dataclasses
import threading
import time
from typing import TYPE_CHECKING

from anima.drivers.feedback import measured_state
from anima.wire.jsontypes import JsonObject
from anima.wire.session import body_fields
from anima.wire.state import RuntimeState

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
    """Builds state snapshots for many readers, recomputing loop statistics at most ``stats_hz``."""

    def __init__(self, runtime: Runtime, *, stats_hz: float = 4.0) -> None:
        self.runtime = runtime
        self._period = 1.0 / stats_hz
        self._lock = threading.Lock()
        self._at = -1e9
        self._state: RuntimeState | None = None

    def state(self) -> RuntimeState:
        now = time.monotonic()
        with self._lock:
            if self._state is None or now - self._at >= self._period:
                self._state = self.runtime.state()
                self._at = now
                return self._state
            state = self._state
        rt = self.runtime
        # the fast-changing parts are fresh on every read
        st = rt.engine.state()
        return dataclasses.replace(
            state,
            t=rt.engine.clock.now(),
            move=st.move,
            queued=st.queued,
            estop=st.estopped,
            speaking=rt.speaking,
            driver_connected=st.driver_connected,
            gaze_target=rt.behaviour.latched_target,
            measured=measured_state(rt.driver),
        )

    def frame(self) -> list[float]:
        """The last commanded channel values, rounded to what a display needs."""
        return [round(float(v), 2) for v in self.runtime.engine.last_frame]
