"""``anima bench tick``: the cost of one fused tick, ticks run back to back (warm caches).

``anima bench loop`` reports the same figure inside the real 100 Hz loop, where each tick
follows a 10 ms sleep and pays for cold caches; this one isolates the computation itself.
The clock is a fake one advanced by one period per tick, so no time is spent waiting.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from anima.bench.scene import set_gaze, set_lips, set_sway, wave
from anima.body import load_body
from anima.drivers.sim import SimDriver
from anima.motion.engine import MotionEngine
from anima.testing.clock import FakeClock


@dataclass(frozen=True, kw_only=True)
class TickBenchResult:
    ticks: int
    p50_us: float
    p99_us: float
    mean_us: float


def run_tick_bench(ticks: int = 20_000) -> TickBenchResult:
    body = load_body()
    driver = SimDriver(history=256)
    driver.connect()
    engine = MotionEngine(body, driver, clock=FakeClock())
    set_lips(engine)
    period = engine.period
    costs = np.zeros(ticks)
    t = 0.0
    warmup = 500
    for k in range(ticks + warmup):
        if k % 3 == 0:  # 33 Hz gaze
            set_gaze(engine, k)
        if k % 5 == 0:  # 20 Hz sway hops
            set_sway(engine, k)
        if engine.state().move is None:
            engine.queue_move(wave(body))
        t += period
        begin = time.perf_counter()
        engine.tick(t)
        if k >= warmup:
            costs[k - warmup] = time.perf_counter() - begin
    driver.disconnect()
    costs *= 1e6
    return TickBenchResult(
        ticks=ticks,
        p50_us=float(np.percentile(costs, 50)),
        p99_us=float(np.percentile(costs, 99)),
        mean_us=float(costs.mean()),
    )
