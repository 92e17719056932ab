"""Absolute-deadline scheduling: tick k is due at t0 + k·period whatever the scheduler does."""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable

import numpy as np
import pytest

from anima.config import MotionConfig
from anima.motion.timer import LoopTimer, _p50_p99_max
from anima.testing import FakeClock, make_engine

pytestmark = pytest.mark.fast

PERIOD = 0.01
T0 = 1000.0


def _late(every: int, late_s: float, base_s: float = 0.003) -> Callable[[float], float]:
    """Wake ``base_s`` late after every wait, and ``late_s`` late on every ``every``-th one."""

    def overshoot(deadline: float) -> float:
        k = round((deadline - T0) / PERIOD)
        return late_s if k % every == every - 1 else base_s

    return overshoot


def test_deadlines_stay_on_the_grid_with_a_late_scheduler() -> None:
    clock = FakeClock(start=T0, overshoot=lambda _d: 0.003)
    timer = LoopTimer(clock, PERIOD)
    timer.start()
    dues = [timer.wait() for _ in range(1000)]
    # every deadline is computed from t0, never from when the previous tick woke up
    assert dues == [T0 + k * PERIOD for k in range(1000)]
    assert clock.waits == dues
    assert timer.missed == 0
    # no drift: after 1000 late wake-ups the clock is still only one overshoot past the grid
    assert clock.now() == pytest.approx(T0 + 999 * PERIOD + 0.003, abs=1e-9)


def test_ticks_more_than_a_period_late_are_counted_and_skipped() -> None:
    # every 50th wait wakes 25 ms late: two whole deadlines pass while it sleeps
    clock = FakeClock(start=T0, overshoot=_late(50, 0.025))
    timer = LoopTimer(clock, PERIOD)
    timer.start()
    dues = [timer.wait() for _ in range(500)]
    ks = [(d - T0) / PERIOD for d in dues]
    # still exactly on the grid, strictly increasing, with the skipped indices left out
    assert all(d == T0 + round(k) * PERIOD for d, k in zip(dues, ks, strict=True))
    assert all(b > a for a, b in itertools.pairwise(dues))
    skipped = round(ks[-1]) + 1 - len(dues)
    assert skipped == timer.missed
    assert timer.missed > 0
    assert timer.missed % 2 == 0  # each late wake-up skips exactly two deadlines
    # the loop rejoins the grid: the wait after a late tick asks for the next grid deadline
    assert all(w == T0 + round((w - T0) / PERIOD) * PERIOD for w in clock.waits)


def test_engine_ticks_run_at_grid_deadlines_and_report_sane_stats() -> None:
    config = MotionConfig()
    clock = FakeClock(start=T0, overshoot=_late(100, 0.013))
    engine, driver, _ = make_engine(clock=clock, config=config)
    engine.run(1000)

    ts = [f.t for f in driver.history()]
    assert ts[0] == T0
    assert all(t == T0 + round((t - T0) / PERIOD) * PERIOD for t in ts)
    # the deadline of the last tick is exactly t0 + k·period: no accumulated drift
    k_last = round((ts[-1] - T0) / PERIOD)
    assert ts[-1] == T0 + k_last * PERIOD

    stats = engine.stats()
    assert stats.ticks == 1000 == driver.sent
    assert stats.missed == 10  # one deadline skipped by each of the ten 13 ms wake-ups
    assert k_last == 1000 - 1 + stats.missed
    assert stats.target_hz == pytest.approx(100.0)
    # ticks run late but the grid keeps the rate: 999 intervals over (k_last) periods
    assert stats.rate_hz == pytest.approx(999 / (k_last * PERIOD), rel=1e-6)
    assert stats.rate_hz < 100.0
    # the usual wake-up is 3 ms late; a 13 ms one starts 3 ms after the deadline it lands on
    assert stats.period_error_p50_ms == pytest.approx(3.0, abs=1e-6)
    assert stats.period_error_max_ms == pytest.approx(3.0, abs=1e-6)
    assert stats.period_error_p99_ms <= stats.period_error_max_ms
    assert stats.tick_compute_p50_us >= 0.0
    assert stats.tick_compute_p99_us >= stats.tick_compute_p50_us
    assert stats.window == 1000
    assert set(stats.as_dict()) >= {"ticks", "missed", "rate_hz", "period_error_p99_ms"}


def test_a_long_stall_between_runs_is_counted_not_caught_up() -> None:
    engine, driver, clock = make_engine()
    engine.run(10)
    clock.advance(0.505)  # the process was descheduled for about half a second
    engine.run(10)
    ts = [f.t for f in driver.history()]
    # deadlines 10…58 passed during the stall (now is 1000.595): 49 missed, none replayed
    assert engine.stats().missed == 49
    # no burst of catch-up ticks: the first tick after the stall is at the current grid slot
    assert ts[10] == pytest.approx(T0 + 59 * PERIOD, abs=1e-9)
    assert engine.stats().period_error_max_ms == pytest.approx(5.0, abs=1e-6)
    assert all(b - a == pytest.approx(PERIOD, abs=1e-9) for a, b in itertools.pairwise(ts[10:]))


def test_stats_window_bounds_the_percentiles() -> None:
    config = MotionConfig(stats_window=64)
    engine, _, _ = make_engine(config=config)
    assert engine.stats().ticks == 0
    assert engine.stats().rate_hz == 0.0
    engine.run(200)
    stats = engine.stats()
    assert stats.ticks == 200
    assert stats.window == 64
    assert math.isfinite(stats.period_error_p99_ms)


@pytest.mark.parametrize("period", [0.0, -0.01, math.nan, math.inf])
def test_timer_rejects_a_bad_period(period: float) -> None:
    with pytest.raises(ValueError, match="period"):
        LoopTimer(FakeClock(), period)


@pytest.mark.parametrize("size", [1, 2, 3, 7, 100, 101, 16_384])
def test_the_stats_percentiles_are_numpys(size: int) -> None:
    # stats() takes its percentiles from two partial sorts, not four np.percentile calls
    rng = np.random.default_rng(size)
    for values in (rng.random(size), rng.integers(0, 4, size).astype(float)):  # ties too
        p50, p99, top = _p50_p99_max(values)
        assert p50 == pytest.approx(np.percentile(values, 50), abs=1e-12)
        assert p99 == pytest.approx(np.percentile(values, 99), abs=1e-12)
        assert top == values.max()
