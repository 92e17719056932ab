"""What every front door reports about the runtime: one snapshot, the same content everywhere.

MQTT publishes it as the retained state message; the web door serves it at ``GET /api/state``
and streams it on its WebSocket; ``anima record`` writes it. Loop statistics take percentiles
over thousands of ticks, so :class:`StateReader` computes them at most a few times a second.
"""

from __future__ import annotations

import dataclasses
import threading
import time
from typing import TYPE_CHECKING, Any

from anima.events import Event
from anima.session.format import body_fields

if TYPE_CHECKING:
    from anima.runtime import Runtime

PAYLOAD_VERSION = 1  # every JSON message anima sends carries "v": 1


def runtime_state(runtime: Runtime) -> dict[str, Any]:
    """The runtime's state as JSON-ready fields (without ``v``)."""
    rt = runtime
    s = rt.engine.stats()
    st = rt.engine.state()
    b = rt.behaviour
    return {
        "t": round(rt.engine.clock.now(), 3),
        "move": st.move,
        "queued": st.queued,
        "gaze_target": b.latched_target,
        "looking": b.gaze.active,
        "speaking": rt.speaking,
        # the voice agent's phase (anima.agent.presence); null without the agent
        "conversation": None if rt.agent is None else rt.agent.phase,
        "shutdown": b.shutting_down,
        "estop": st.estopped,
        "driver_connected": st.driver_connected,
        "humanoid": None if rt.humanoid is None else rt.humanoid.summary(),
        "loop": {
            "rate_hz": round(s.rate_hz, 3),
            "period_error_p99_ms": round(s.period_error_p99_ms, 3),
            "missed": s.missed,
        },
    }


def body_description(runtime: Runtime) -> dict[str, Any]:
    """Channels with their limits and roles, and the named postures (sent once)."""
    return body_fields(runtime.body)


def animations_description(runtime: Runtime) -> dict[str, Any]:
    """The library's gestures and gaze postures, by name."""
    lib = runtime.library
    return {"gestures": lib.gestures(), "postures": lib.postures()}


def event_fields(event: Event) -> dict[str, Any]:
    """An event as JSON-ready fields: its ``kind`` and its dataclass fields."""
    fields = dataclasses.asdict(event)
    return {"kind": event.kind, **fields}


class StateReader:
    """Builds state snapshots for many readers, recomputing loop statistics at most ``stats_hz``."""

    def __init__(self, runtime: Runtime, *, stats_hz: float = 4.0) -> None:
        self.runtime = runtime
        self._period = 1.0 / stats_hz
        self._lock = threading.Lock()
        self._at = -1e9
        self._state: dict[str, Any] = {}

    def state(self) -> dict[str, Any]:
        now = time.monotonic()
        with self._lock:
            if now - self._at >= self._period:
                self._state = runtime_state(self.runtime)
                self._at = now
            state = dict(self._state)
        rt = self.runtime
        # the fast-changing parts are fresh on every read
        st = rt.engine.state()
        state.update(
            t=round(rt.engine.clock.now(), 3),
            move=st.move,
            queued=st.queued,
            estop=st.estopped,
            speaking=rt.speaking,
            driver_connected=st.driver_connected,
            gaze_target=rt.behaviour.latched_target,
        )
        return state

    def frame(self) -> list[float]:
        """The last commanded channel values, rounded to what a display needs."""
        return [round(float(v), 2) for v in self.runtime.engine.last_frame]
