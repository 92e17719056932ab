"""The runtime's typed state (:class:`~anima.wire.state.RuntimeState`), as every front door
and the SDK report it: :meth:`anima.runtime.Runtime.state`."""

from __future__ import annotations

from typing import TYPE_CHECKING

from anima.drivers.feedback import measured_state
from anima.wire.state import LoopState, RuntimeState

if TYPE_CHECKING:
    from anima.runtime import Runtime


def loop_state(rt: Runtime) -> LoopState:
    """The motion loop's statistics: percentiles over thousands of ticks, so a reader that
    asks many times a second keeps them a while (``frontdoors.state.StateReader``)."""
    s = rt.engine.stats()
    return LoopState(rate_hz=s.rate_hz, period_error_p99_ms=s.period_error_p99_ms, missed=s.missed)


def runtime_state(rt: Runtime, loop: LoopState | None = None) -> RuntimeState:
    """The runtime's state now, as every front door and the SDK report it; ``loop``: the
    loop's statistics when the caller has recent ones (else computed now)."""
    st = rt.engine.state()
    b = rt.behaviour
    return RuntimeState(
        t=rt.engine.clock.now(),
        move=st.move,
        queued=st.queued,
        gaze_target=b.latched_target,
        looking=b.gaze.active,
        speaking=rt.speaking,
        conversation=None if rt.agent is None else rt.agent.phase,
        shutdown=b.shutting_down,
        estop=st.estopped,
        driver_connected=st.driver_connected,
        humanoid=None if rt.humanoid is None else rt.humanoid.summary(),
        loop=rt.loop_state() if loop is None else loop,
        measured=measured_state(rt.driver),
        attention=None if rt.attention is None else rt.attention.snapshot(),
    )
