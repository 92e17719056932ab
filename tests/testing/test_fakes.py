"""The fakes anima ships for tests: FakeClock and make_engine."""

from __future__ import annotations

import pytest

from anima.clock import Clock, MonotonicClock
from anima.motion import Blink, Breathing, Goto
from anima.testing import FakeClock, make_engine

pytestmark = pytest.mark.fast


def test_fake_clock_moves_only_when_told() -> None:
    clock = FakeClock(start=5.0)
    assert isinstance(clock, Clock)
    assert clock.now() == 5.0
    assert clock.now() == 5.0
    clock.advance(0.25)
    assert clock.now() == 5.25
    with pytest.raises(ValueError, match="back"):
        clock.advance(-0.1)


def test_fake_clock_sleeps_to_the_deadline_plus_overshoot_and_records_waits() -> None:
    clock = FakeClock(start=0.0, overshoot=lambda d: 0.002 if d < 1.0 else -5.0)
    clock.sleep_until(0.5)
    assert clock.now() == pytest.approx(0.502)
    clock.sleep_until(0.1)  # already passed: returns at once (plus the overshoot)
    assert clock.now() == pytest.approx(0.504)
    clock.sleep_until(2.0)  # a negative overshoot never makes a wait wake early
    assert clock.now() == 2.0
    assert clock.waits == [0.5, 0.1, 2.0]


def test_monotonic_clock_waits_until_the_deadline() -> None:
    clock = MonotonicClock()
    deadline = clock.now() + 0.005
    clock.sleep_until(deadline)
    assert clock.now() >= deadline
    with pytest.raises(ValueError, match="spin_s"):
        MonotonicClock(spin_s=0.5)


def test_make_engine_gives_a_quiet_engine_on_a_connected_sim() -> None:
    engine, driver, clock = make_engine()
    assert driver.is_connected
    assert engine.clock is clock
    assert engine.idle_layers == []
    engine.run(3)
    assert driver.sent == 3
    assert all((f.values == engine.body.defaults()).all() for f in driver.history())
    assert clock.waits == [1000.0, 1000.01, 1000.02]


def test_make_engine_with_default_idle_layers_and_a_long_history() -> None:
    engine, driver, _ = make_engine(idle=None, history=10)
    kinds = {type(layer) for layer in engine.idle_layers}
    assert kinds == {Breathing, Blink}
    engine.queue_move(Goto(engine.body, {"r_elbow": 100}, 0.1))
    engine.run(25)
    assert len(driver.history()) == 10
    assert driver.sent == 25
