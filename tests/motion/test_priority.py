"""The motion thread's priority and the interpreter's switch interval (motion/priority.py)."""

from __future__ import annotations

import os
import sys
import threading

import pytest

from anima.body import load_body
from anima.clock import MonotonicClock
from anima.config import AnimaConfig, MotionConfig, SpeechConfig
from anima.drivers.sim import SimDriver
from anima.errors import ConfigError
from anima.motion.engine import MotionEngine
from anima.motion.priority import AUTO_SPIN_S, SwitchInterval, make_realtime, set_timer_slack
from anima.runtime import Runtime
from anima.testing import FakeClock, eventually

pytestmark = pytest.mark.fast

linux_only = pytest.mark.skipif(not hasattr(os, "sched_getscheduler"), reason="Linux scheduling")


def _may_be_realtime() -> bool:
    """Whether this process may use SCHED_FIFO (root in CI; CAP_SYS_NICE or RLIMIT_RTPRIO)."""
    outcome: list[str | None] = []
    probe = threading.Thread(target=lambda: outcome.append(make_realtime(1)))
    probe.start()
    probe.join()
    return outcome == [None]


def _policy(thread: threading.Thread) -> int:
    assert thread.native_id is not None
    return os.sched_getscheduler(thread.native_id)


@pytest.mark.integration  # the real motion thread
@linux_only
def test_the_motion_thread_runs_real_time_where_the_os_allows_it() -> None:
    if not _may_be_realtime():
        pytest.skip("SCHED_FIFO is not permitted here (not root, no CAP_SYS_NICE)")
    driver = SimDriver()
    driver.connect()
    engine = MotionEngine(
        load_body(), driver, clock=MonotonicClock(), config=MotionConfig(), idle=()
    )
    engine.start()
    try:
        assert eventually(lambda: engine.stats().ticks > 5, 2.0)
        assert engine._loop.thread is not None
        assert _policy(engine._loop.thread) == os.SCHED_FIFO
        assert os.sched_getparam(engine._loop.thread.native_id or 0).sched_priority == 10
        assert _policy(threading.current_thread()) == os.SCHED_OTHER  # only that thread
    finally:
        engine.stop()


@pytest.mark.integration  # the real motion thread
@linux_only
def test_priority_zero_leaves_the_motion_thread_alone() -> None:
    driver = SimDriver()
    driver.connect()
    engine = MotionEngine(
        load_body(),
        driver,
        clock=MonotonicClock(),
        config=MotionConfig(realtime_priority=0),
        idle=(),
    )
    engine.start()
    try:
        assert eventually(lambda: engine.stats().ticks > 5, 2.0)
        assert engine._loop.thread is not None
        assert _policy(engine._loop.thread) == os.SCHED_OTHER
    finally:
        engine.stop()


def test_a_thread_the_os_refuses_gets_a_reason_not_an_exception() -> None:
    outcome: list[str | None] = []
    probe = threading.Thread(target=lambda: outcome.append(make_realtime(100)))  # out of range
    probe.start()
    probe.join()
    assert outcome[0] is not None
    assert "SCHED_FIFO" in outcome[0]


def test_the_runtime_sets_the_switch_interval_while_it_runs_and_restores_it() -> None:
    before = sys.getswitchinterval()
    config = AnimaConfig(speech=SpeechConfig(enabled=False))
    with Runtime(config, driver=SimDriver(), clock=FakeClock()):
        assert sys.getswitchinterval() == pytest.approx(0.001)
    assert sys.getswitchinterval() == before
    config = AnimaConfig(
        speech=SpeechConfig(enabled=False), motion=MotionConfig(switch_interval_ms=None)
    )
    with Runtime(config, driver=SimDriver(), clock=FakeClock()):
        assert sys.getswitchinterval() == before


def test_switch_interval_applies_once_and_restores_once() -> None:
    before = sys.getswitchinterval()
    switch = SwitchInterval(2.0)
    switch.apply()
    switch.apply()
    assert sys.getswitchinterval() == pytest.approx(0.002)
    switch.restore()
    switch.restore()
    assert sys.getswitchinterval() == before


@pytest.mark.parametrize(
    ("field", "value"),
    [("realtime_priority", 100), ("realtime_priority", -1), ("switch_interval_ms", 0.01)],
)
def test_absurd_settings_are_refused(field: str, value: float) -> None:
    with pytest.raises(ConfigError, match=f"motion.{field}"):
        MotionConfig(**{field: value})  # type: ignore[arg-type]


@pytest.mark.integration  # the real motion thread
@linux_only
def test_the_loop_spins_only_where_its_wake_ups_are_not_precise_without_it() -> None:
    # the 0.3 ms spin before each deadline cost ~2.5 % of a core; with real-time priority or
    # a 1 µs timer slack the wake-ups are as precise without it (motion/priority.py)
    def started(config: MotionConfig) -> MotionEngine:
        driver = SimDriver()
        driver.connect()
        engine = MotionEngine(load_body(), driver, config=config, idle=())
        engine.start()
        assert engine.wait_first_tick(5.0)
        return engine

    auto = started(MotionConfig())
    try:
        assert isinstance(auto.clock, MonotonicClock)
        assert eventually(lambda: auto.clock.spin_s == 0.0, 2.0)  # type: ignore[attr-defined]
    finally:
        auto.stop()
    asked = started(MotionConfig(spin_s=0.0002))
    try:
        assert isinstance(asked.clock, MonotonicClock)
        assert asked.clock.spin_s == 0.0002  # a spin asked for is kept
    finally:
        asked.stop()
    given = MonotonicClock(spin_s=AUTO_SPIN_S)
    driver = SimDriver()
    driver.connect()
    engine = MotionEngine(load_body(), driver, clock=given, config=MotionConfig(), idle=())
    engine.start()
    try:
        assert engine.wait_first_tick(5.0)
        assert given.spin_s == AUTO_SPIN_S  # a clock passed in is the caller's, left alone
    finally:
        engine.stop()


@linux_only
def test_the_timer_slack_is_set_on_the_calling_thread_only() -> None:
    import ctypes

    libc = ctypes.CDLL(None)
    pr_get_timerslack = 30
    seen: list[int] = []

    def probe() -> None:
        assert set_timer_slack(1000)
        seen.append(libc.prctl(pr_get_timerslack, 0, 0, 0, 0))

    thread = threading.Thread(target=probe)
    thread.start()
    thread.join()
    assert seen == [1000]
    assert libc.prctl(pr_get_timerslack, 0, 0, 0, 0) != 1000  # not this thread's


@pytest.mark.parametrize("spin", [-0.001, float("nan"), 0.005])
def test_a_spin_out_of_range_is_refused(spin: float) -> None:
    with pytest.raises(ConfigError, match=r"motion\.spin_s"):
        MotionConfig(spin_s=spin)
    assert MotionConfig().spin_s is None  # auto by default
