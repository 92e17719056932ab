"""`anima serve`'s status line: every ``serve.status_interval_s`` one line on the loop, the
robot and the doors (:func:`status_line`), written while the main thread waits for a signal or
the end of ``--seconds`` (:func:`wait`)."""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from anima.cli.process import Signals
    from anima.motion.timer import LoopStats
    from anima.runtime import Runtime

log = logging.getLogger("anima")


def wait(runtime: Runtime, signals: Signals, seconds: float | None, every: float) -> None:
    """Until a stop signal or ``seconds`` (None: no end), a status line each ``every`` s."""
    end = None if seconds is None else time.monotonic() + seconds
    last = runtime.engine.stats()
    due = time.monotonic() + every  # the next status line's time: a SIGHUP does not put it off
    while True:
        until = due if end is None else min(due, end)
        wait = until - time.monotonic()
        if end is not None and wait <= 0 and until == end:
            return
        if signals.wait(wait):
            return
        if time.monotonic() >= until:  # the interval is over (not a SIGHUP read early)
            now = runtime.engine.stats()
            log.info(status_line(runtime, since=last, stats=now))
            last = now
            due = time.monotonic() + every


def recent_rate(stats: LoopStats, since: LoopStats | None) -> float:
    """The loop's rate over the ticks since ``since`` (the previous status line's stats),
    not since the start: a start-up stall weighed on that average for minutes (82 Hz shown
    for 25 s). No tick since then: 0. Without ``since``: the whole run's."""
    if since is None:
        return stats.rate_hz
    ticks = stats.ticks - since.ticks
    span = stats.elapsed_s - since.elapsed_s
    if ticks <= 0 or span <= 0:
        return 0.0
    return ticks / span


def status_line(
    runtime: Runtime, since: LoopStats | None = None, stats: LoopStats | None = None
) -> str:
    """One line on the loop, the robot and the doors; the rate since ``since`` when given."""
    s = runtime.engine.stats() if stats is None else stats
    st = runtime.engine.state()
    move = st.move or "idle"
    driver = "connected" if st.driver_connected else "DISCONNECTED"
    flag = " | ESTOP" if st.estopped else ""
    return (
        f"rate {recent_rate(s, since):.2f} Hz | period error p99 {s.period_error_p99_ms:.3f} ms "
        f"max {s.period_error_max_ms:.3f} ms | missed {s.missed} | tick p50 "
        f"{s.tick_compute_p50_us:.0f} µs | move {move} | driver {driver}{_mqtt_status(runtime)}"
        f"{_web_status(runtime)}{flag}"
    )


def _web_status(runtime: Runtime) -> str:
    """`` | web refused 12, timed out 3`` when the web door turned clients away (else
    nothing): what its limits logged once is counted here (docs/web.md, "Limits")."""
    from anima.frontdoors.web import WebFrontDoor

    parts: list[str] = []
    for door in runtime.frontdoors:
        if isinstance(door, WebFrontDoor):
            c = door.counts()
            counted = (
                ("refused", c.refused),
                ("evicted idle", c.evicted),
                ("timed out", c.timed_out),
                ("dropped slow", c.stalled),
                ("ws refused", door.ws_refused),
                ("accept failures", c.accept_failures),
            )
            parts += [f"{name} {n}" for name, n in counted if n]
    return f" | web {', '.join(parts)}" if parts else ""


def _mqtt_status(runtime: Runtime) -> str:
    """`` | mqtt connected`` or `` | mqtt DISCONNECTED`` (deaf), when an MQTT door is attached."""
    from anima.frontdoors.mqtt.frontdoor import MqttFrontDoor

    doors = [d for d in runtime.frontdoors if isinstance(d, MqttFrontDoor)]
    return "".join(f" | mqtt {'connected' if d.connected else 'DISCONNECTED'}" for d in doors)
