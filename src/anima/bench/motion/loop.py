"""``anima bench loop``: the real 100 Hz loop with every layer active, on the real clock.

Layers exercised: breathing and blink (idle), a gaze offset updated at 30 Hz and a speech-sway
offset updated every 50 ms from their own threads, a lips override read at every tick, and a
keyframe animation re-queued whenever the previous one ends.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass

from anima.bench.scene import set_gaze, set_lips, set_sway, wave
from anima.body import load_body
from anima.config import MotionConfig
from anima.drivers.sim import SimDriver
from anima.motion.engine import MotionEngine
from anima.motion.timer import LoopStats


@dataclass(frozen=True, kw_only=True)
class LoopBenchResult:
    stats: LoopStats
    moves_played: int
    offset_updates: int
    frames_sent: int
    faults: int


def run_loop_bench(seconds: float = 10.0, config: MotionConfig | None = None) -> LoopBenchResult:
    body = load_body()
    driver = SimDriver(history=256)
    driver.connect()
    engine = MotionEngine(body, driver, config=config or MotionConfig())
    stop = threading.Event()
    counters = {"moves": 0, "offsets": 0}

    def gaze() -> None:  # 30 Hz, like a face tracker
        k = 0
        while not stop.wait(1 / 30):
            k += 1
            set_gaze(engine, k)
            counters["offsets"] += 1

    def sway() -> None:  # one hop every 50 ms, like speech sway
        k = 0
        while not stop.wait(0.05):
            k += 1
            set_sway(engine, k)
            counters["offsets"] += 1

    def animate() -> None:
        while not stop.is_set():
            engine.queue_move(wave(body))
            counters["moves"] += 1
            while not engine.wait_until_idle(0.1):
                if stop.is_set():
                    return

    set_lips(engine)
    threads = [threading.Thread(target=f, daemon=True) for f in (gaze, sway, animate)]
    engine.start()
    for th in threads:
        th.start()
    time.sleep(seconds)
    stats = engine.stats()
    stop.set()
    for th in threads:
        th.join(1.0)
    engine.stop()
    driver.disconnect()
    return LoopBenchResult(
        stats=stats,
        moves_played=counters["moves"],
        offset_updates=counters["offsets"],
        frames_sent=driver.sent,
        faults=engine.faults,
    )
