"""``anima bench reachy``: anima driving Pollen's own Reachy Mini daemon — its mockup
simulation, started on a free loopback port from ``.venv-reachy``
(``scripts/reachy-daemon/setup.sh``), or a daemon already running (a robot, or ``--sim``)
given by ``--host``/``--port``.

For ``seconds`` the runtime plays the Reachy body's starter animations back to back (head,
antennas and body), and reports:

- **lag**, commanded → reported: for each report of the daemon while the head moves, the age
  of the target it matches (the newest of the closest sent: :mod:`anima.drivers.feedback`);
- **follow error**: that report's distance to its target, at the worst channel (° or mm);
- **rates**: targets the driver sent a second; reports the daemon sent a second, and how many
  of those had moved (a new position applied: the rate the daemon really applies targets);
- **the loop** while driving it: its rate, period error p99 and missed deadlines.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

from anima import commands as cmd
from anima.bench.measure import percentile
from anima.build import build
from anima.config import (
    AnimaConfig,
    MqttConfig,
    ReachyMiniDriverConfig,
    SpeechConfig,
    WebConfig,
)
from anima.drivers.reachy_mini import ReachyMiniDriver
from anima.errors import DriverError
from anima.testing.reachy_daemon import MockupDaemon, find_daemon


@dataclass(frozen=True, kw_only=True)
class ReachyFigures:
    daemon: str  # what was driven
    seconds: float
    rate_hz: float  # the driver's target rate
    lags: int  # reports matched to a target
    lag_p50_ms: float
    lag_p99_ms: float
    lag_max_ms: float
    follow_p50: float  # the report's distance to its target, worst channel (° or mm)
    follow_p99: float
    sent_per_s: float
    reports_per_s: float
    applied_per_s: float  # reports with a new position
    dropped: int  # frames dropped while the daemon was away
    loop_rate_hz: float
    loop_p99_ms: float
    missed: int


def run_reachy_bench(
    seconds: float = 20.0,
    *,
    rate_hz: float = 50.0,
    host: str | None = None,
    port: int = 8000,
    daemon: Path | None = None,
) -> ReachyFigures:
    if host is not None:
        return _drive(host, port, f"the daemon at {host}:{port}", seconds, rate_hz)
    exe = daemon or find_daemon()
    if exe is None:
        raise DriverError(
            "no Reachy Mini daemon to drive: build the mockup's (scripts/reachy-daemon/setup.sh), "
            "name one with --daemon, or give a running one's --host and --port"
        )
    with MockupDaemon(exe) as mockup:
        return _drive("127.0.0.1", mockup.port, f"{exe} --mockup-sim", seconds, rate_hz)


def _drive(host: str, port: int, what: str, seconds: float, rate_hz: float) -> ReachyFigures:
    cfg = AnimaConfig(
        driver=ReachyMiniDriverConfig(host=host, port=port, rate_hz=rate_hz),
        mqtt=MqttConfig(enabled=False),
        web=WebConfig(enabled=False),
        speech=SpeechConfig(enabled=False),
    )
    runtime = build(cfg)
    driver = runtime.driver
    if not isinstance(driver, ReachyMiniDriver):  # pragma: no cover - the config says so
        raise DriverError("anima bench reachy: the driver is not reachy_mini")
    with runtime:
        runtime.wait_first_tick()
        time.sleep(1.0)  # the ease to rest, before anything is counted
        names = runtime.library.gestures()
        driver.history.samples = []
        sent, reports, moves = driver.sent, driver.readings, driver.moves
        missed = runtime.engine.stats().missed
        t0 = time.monotonic()
        k = 0
        while time.monotonic() - t0 < seconds:
            if runtime.state().move is None:
                runtime.execute(cmd.PlayAnimation(name=names[k % len(names)]))
                k += 1
            time.sleep(0.05)
        elapsed = time.monotonic() - t0
        samples = driver.history.samples
        driver.history.samples = None
        stats = runtime.engine.stats()
        lags = [m.lag_s * 1000.0 for m in samples if m.lag_s is not None]
        follow = [m.deviation for m in samples]
        return ReachyFigures(
            daemon=what,
            seconds=round(elapsed, 2),
            rate_hz=rate_hz,
            lags=len(lags),
            lag_p50_ms=percentile(lags, 50),
            lag_p99_ms=percentile(lags, 99),
            lag_max_ms=max(lags, default=float("nan")),
            follow_p50=percentile(follow, 50),
            follow_p99=percentile(follow, 99),
            sent_per_s=(driver.sent - sent) / elapsed,
            reports_per_s=(driver.readings - reports) / elapsed,
            applied_per_s=(driver.moves - moves) / elapsed,
            dropped=driver.dropped,
            loop_rate_hz=stats.rate_hz,
            loop_p99_ms=stats.period_error_p99_ms,
            missed=stats.missed - missed,
        )


def figures_lines(f: ReachyFigures) -> list[str]:
    return [
        f"daemon                : {f.daemon}, {f.seconds:g} s of the starter animations",
        f"lag, sent → reported  : p50 {f.lag_p50_ms:.1f} ms, p99 {f.lag_p99_ms:.1f} ms, "
        f"max {f.lag_max_ms:.1f} ms ({f.lags} reports)",
        f"follow error          : p50 {f.follow_p50:.2f}, p99 {f.follow_p99:.2f} (° or mm)",
        f"targets sent          : {f.sent_per_s:.1f}/s (driver.rate_hz {f.rate_hz:g})",
        f"daemon reports        : {f.reports_per_s:.1f}/s, {f.applied_per_s:.1f}/s with a new "
        "position (applied)",
        f"loop while driving    : {f.loop_rate_hz:.2f} Hz, period error p99 "
        f"{f.loop_p99_ms:.2f} ms, {f.missed} missed; {f.dropped} frames dropped",
    ]
