"""The autojump fake clock: time jumps to the next deadline once every thread waiting on it is
blocked; waits are woken by a signal, not by polling; a thread at work holds the clock."""

from __future__ import annotations

import threading
import time

import pytest

from anima import commands as cmd
from anima.build import build
from anima.config import AnimaConfig
from anima.drivers.sim import SimDriver
from anima.events import SpeechEnded, SpeechStarted
from anima.runtime import Runtime
from anima.speech.sinks import NullSink
from anima.testing import EventRecorder, FakeClock
from anima.testing.tts import ScriptedEngine

pytestmark = pytest.mark.fast

REAL_BOUND_S = 10.0  # a generous real-time bound: only a hang reaches it


def _thread(target: object) -> threading.Thread:
    t = threading.Thread(target=target, daemon=True)  # type: ignore[arg-type]
    t.start()
    return t


def test_a_lone_sleep_jumps_straight_to_its_deadline() -> None:
    with FakeClock(start=0.0, autojump=True) as clock:
        woke: list[float] = []
        t = _thread(lambda: (clock.sleep_until(3600.0), woke.append(clock.now())))
        t.join(REAL_BOUND_S)
        assert woke == [3600.0]  # an hour of fake time, at once


def test_sleeps_wake_in_deadline_order_each_at_its_own_time() -> None:
    with FakeClock(start=0.0, autojump=True) as clock:
        woke: list[tuple[str, float]] = []
        lock = threading.Lock()

        def sleeper(name: str, deadline: float) -> None:
            clock.sleep_until(deadline)
            with lock:
                woke.append((name, clock.now()))

        with clock.hold():  # a thread counts from its first wait: all three first
            threads = [_thread(lambda n=n, d=d: sleeper(n, d)) for n, d in (("c", 30), ("a", 10))]
            threads.append(_thread(lambda: sleeper("b", 20)))
            while len(clock.waits) < 3:
                clock.changed(0.1)  # woken as a wait on the clock begins
        for t in threads:
            t.join(REAL_BOUND_S)
        assert sorted(woke, key=lambda w: w[1]) == [("a", 10.0), ("b", 20.0), ("c", 30.0)]


def test_a_timed_wait_times_out_on_fake_time_and_an_event_wakes_it_at_once() -> None:
    with FakeClock(start=0.0, autojump=True) as clock:
        never = threading.Event()
        assert clock.wait(never, 120.0) is False
        assert clock.now() == 120.0
        soon = threading.Event()
        got: list[bool] = []
        waiter = _thread(lambda: got.append(clock.wait(soon, None)))
        while clock.waiting == 0:  # the waiter has begun its wait
            clock.changed(0.1)  # woken as a wait on the clock begins
        soon.set()  # no clock move: the event's own signal wakes it
        waiter.join(REAL_BOUND_S)
        assert got == [True]
        assert clock.now() == 120.0


def test_a_thread_at_work_holds_the_clock_until_it_blocks() -> None:
    with FakeClock(start=0.0, autojump=True) as clock:
        go_on = threading.Event()
        busy = threading.Event()

        def worker() -> None:
            clock.wait(threading.Event(), 0.5)  # it waits on the clock: the clock knows it
            busy.set()
            while not go_on.is_set():  # computing, not blocked: time must not jump
                sum(range(1000))
            clock.wait(threading.Event(), 1.0)

        with clock.hold():
            sleeper = _thread(lambda: clock.sleep_until(100.0))
            t = _thread(worker)
            while not (clock.waits and clock.waiting):
                clock.changed(0.1)  # woken as a wait on the clock begins
        assert busy.wait(REAL_BOUND_S)
        at_work = clock.now()
        time.sleep(0.05)  # real time passes while the worker computes …
        assert clock.now() == at_work == 0.5  # … and fake time does not
        go_on.set()
        t.join(REAL_BOUND_S)
        sleeper.join(REAL_BOUND_S)
        assert clock.now() == 100.0


def test_a_condition_wait_on_the_clock_is_notified_or_times_out_on_fake_time() -> None:
    with FakeClock(start=0.0, autojump=True) as clock:
        cond = threading.Condition()
        with cond:
            assert clock.wait_notified(cond, 2.5) is False
        assert clock.now() == 2.5
        got: list[bool] = []

        def waiter() -> None:
            with cond:
                got.append(clock.wait_notified(cond, None))

        t = _thread(waiter)
        while clock.waiting == 0 and not got:
            with cond:
                cond.notify_all()
            clock.changed(0.1)  # woken as a wait on the clock begins
        t.join(REAL_BOUND_S)
        assert got == [True]


def _speaking_runtime(clock: FakeClock) -> tuple[Runtime, EventRecorder]:
    """The whole runtime on ``clock``, speech by the scripted engine on a sink that plays on it."""
    runtime = build(
        AnimaConfig(), doors=False, audio_in="none", driver=SimDriver(history=10), clock=clock,
        tts=[ScriptedEngine()], audio_sink=NullSink(clock), report=lambda _line: None,
    )  # fmt: skip
    return runtime, EventRecorder().attach(runtime.events)


def test_a_whole_runtime_speaks_on_fake_time_faster_than_real_time() -> None:
    clock = FakeClock(autojump=True)
    runtime, recorder = _speaking_runtime(clock)
    runtime.start()  # its own threads: the motion loop sleeps on the fake clock
    try:
        began = time.monotonic()
        runtime.execute(cmd.Speak(text="one two three four five six seven eight nine ten"))
        ended = recorder.wait_for(SpeechEnded, REAL_BOUND_S)
        real = time.monotonic() - began
        started = recorder.of(SpeechStarted)[0]
        audio_s = runtime.speech.sink.written() / 16000 if runtime.speech else 0.0
        # the utterance lasted its audio, to the tick, on the fake clock
        assert ended.t - started.t == pytest.approx(audio_s, abs=0.011)
        assert real < ended.t - started.t  # and took less real time than it lasted
    finally:
        runtime.stop(ease=False)
        clock.close()


def test_an_interrupt_ends_a_sleep_on_a_held_clock_and_counts_no_tick() -> None:
    clock = FakeClock(autojump=True)
    interrupt = threading.Event()
    got: list[bool] = []
    with clock.hold():  # time stands still: only the interrupt can end the sleep
        waiter = _thread(lambda: got.append(clock.sleep_until(clock.now() + 5.0, interrupt)))
        while not clock.waits:  # the sleep has begun
            clock.changed(REAL_BOUND_S)
        interrupt.set()
        waiter.join(REAL_BOUND_S)
        assert got == [False]
        assert clock.now() == 1000.0
    # set before the sleep: no wait at all; clear: the sleep ends at its deadline
    assert clock.sleep_until(clock.now() + 1.0, interrupt) is False
    assert clock.sleep_until(clock.now() + 1.0, threading.Event()) is True
    assert clock.now() == 1001.0
    clock.close()


def test_a_runtime_stops_while_its_clock_is_held_even_mid_utterance() -> None:
    clock = FakeClock(autojump=True)
    runtime, recorder = _speaking_runtime(clock)
    runtime.start()
    try:
        with clock.hold():  # the loop asleep on the held clock, an utterance under way
            runtime.execute(cmd.Speak(text="one two three four five six seven eight nine ten"))
            assert runtime.speaking
            stopped = _thread(lambda: runtime.stop(ease=False))
            stopped.join(REAL_BOUND_S)
            assert not stopped.is_alive(), "the runtime could not stop with its clock held"
        assert recorder.wait_for(SpeechEnded, REAL_BOUND_S).reason == "shutdown"
        assert not runtime.engine.running
    finally:
        runtime.stop(ease=False)
        clock.close()
