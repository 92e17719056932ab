"""Many threads commanding a running engine: no exception, no fault, every frame safe.

This is the one motion test on the real clock; it is bounded to well under two seconds and
asserts behaviour only (no timing figures).
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable

import numpy as np
import pytest

from anima.body import load_body
from anima.clock import MonotonicClock
from anima.drivers.sim import SimDriver
from anima.errors import EngineStateError, EStopActiveError
from anima.events import Event, EventHub, MoveStarted
from anima.motion import Blink, Breathing, Goto, Hold, Keyframes
from anima.motion.engine import MotionEngine
from anima.testing import eventually

pytestmark = pytest.mark.integration

RUN_S = 0.6


def test_concurrent_commands_on_a_running_engine() -> None:
    body = load_body()
    driver = SimDriver(history=100_000)
    driver.connect()
    hub = EventHub()
    seen: list[Event] = []
    hub.subscribe(seen.append)
    hub.start()
    engine = MotionEngine(
        body,
        driver,
        clock=MonotonicClock(),
        events=hub,
        idle=[Breathing(body), Blink(body, interval_s=(0.1, 0.3), seed=1)],
    )
    errors: list[BaseException] = []
    stop = threading.Event()
    names = body.names

    def worker(seed: int, step: Callable[[random.Random], None]) -> Callable[[], None]:
        def run() -> None:
            rng = random.Random(seed)
            try:
                while not stop.is_set():
                    step(rng)
                    time.sleep(rng.uniform(0.0, 0.004))
            except BaseException as exc:  # collected and asserted on the main thread
                errors.append(exc)

        return run

    def offsets(rng: random.Random) -> None:
        head = (rng.uniform(-1, 1), rng.uniform(-1, 1), rng.uniform(-1, 1))
        engine.set_offset(
            rng.choice(["gaze", "sway"]), head=head, deltas={"brows": rng.uniform(-90, 90)}
        )
        if rng.random() < 0.1:
            engine.clear_offset("sway")

    def moves(rng: random.Random) -> None:
        target = {rng.choice(names): rng.uniform(-500, 500) for _ in range(3)}
        choice = rng.random()
        try:
            if choice < 0.5:
                engine.queue_move(Goto(body, target, rng.uniform(0, 0.3)))
            elif choice < 0.7:
                engine.play_now(Keyframes(body, list(target), [list(target.values())] * 3, 0.02))
            elif choice < 0.8:
                engine.queue_move(Hold(body, rng.uniform(0, 0.1)))
            else:
                engine.clear()
        except EStopActiveError:
            pass  # another thread holds the estop: refusing is the right answer

    def overrides(rng: random.Random) -> None:
        if rng.random() < 0.3:
            engine.release_override("lips")
        else:
            lips = {"lip_open": rng.uniform(0, 300), "lip_wide": rng.uniform(0, 300)}
            lips["lip_narrow"] = rng.uniform(0, 300)
            engine.set_override("lips", lips)

    def estops(rng: random.Random) -> None:
        # on for a few of this thread's steps (a few ms each), then off again
        if engine.estopped:
            if rng.random() < 0.3:
                engine.reset()
        elif rng.random() < 0.05:
            engine.estop()

    def readers(_rng: random.Random) -> None:
        state = engine.state()
        assert len(state.frame) == len(body)
        engine.stats()
        engine.last_frame  # noqa: B018 - reading it concurrently is the point

    steps = [offsets, offsets, moves, moves, overrides, estops, readers]
    threads = [
        threading.Thread(target=worker(i, step), name=f"pusher-{i}", daemon=True)
        for i, step in enumerate(steps)
    ]
    engine.start()
    assert engine.running
    with pytest.raises(EngineStateError):
        engine.start()
    for t in threads:
        t.start()
    time.sleep(RUN_S)
    stop.set()
    for t in threads:
        t.join(1.0)
        assert not t.is_alive()
    engine.stop()
    assert not engine.running
    hub.stop()

    assert errors == []
    assert engine.faults == 0
    frames = np.array([f.values for f in driver.history()])
    assert len(frames) == driver.sent
    assert len(frames) > 10  # the loop really ran (loose: a busy machine may be slow)
    assert np.isfinite(frames).all()
    assert (frames >= body.lower()).all()
    assert (frames <= body.upper()).all()
    steps_taken = np.abs(np.diff(np.vstack((body.defaults(), frames)), axis=0))
    assert (steps_taken <= body.max_speeds() * engine.period + 1e-9).all()
    rule = body.lip_rule
    assert rule is not None
    assert not any(rule.violated(f) for f in frames)
    assert any(isinstance(e, MoveStarted) for e in seen)
    # after stop() no thread is left to send anything
    assert "anima-motion" not in {t.name for t in threading.enumerate()}


def test_stop_without_start_is_harmless_and_the_engine_restarts() -> None:
    body = load_body()
    driver = SimDriver()
    driver.connect()
    engine = MotionEngine(body, driver, clock=MonotonicClock(), idle=())
    engine.stop()
    for _ in range(2):
        before = driver.sent
        engine.start()
        eventually(lambda b=before: driver.sent >= b + 3, timeout=1.0)
        engine.stop()
        assert driver.sent >= before + 3
        assert not engine.running
