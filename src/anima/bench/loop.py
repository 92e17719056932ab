"""``anima bench loop``: the real 100 Hz loop with every layer active, on the real clock.

Layers exercised: breathing and blink (idle), a gaze offset updated at 30 Hz and a speech-sway
offset updated every 50 ms from their own threads, a lips override read at every tick, and a
keyframe animation re-queued whenever the previous one ends.
"""

from __future__ import annotations

import math
import threading
import time
from dataclasses import dataclass

import numpy as np

from anima.body import Body, load_body
from anima.config import MotionConfig
from anima.drivers.sim import SimDriver
from anima.motion.engine import MotionEngine
from anima.motion.moves import Keyframes
from anima.motion.timer import LoopStats

_ANIMATED = ("r_shoulder_pitch", "r_elbow", "l_shoulder_pitch", "l_elbow", "brows", "torso_yaw")


@dataclass(frozen=True, kw_only=True)
class LoopBenchResult:
    stats: LoopStats
    moves_played: int
    offset_updates: int
    frames_sent: int
    faults: int


def _wave(body: Body) -> Keyframes:
    """A 3 s, 30 ms-per-frame arm-and-brow animation on channels the other layers leave free."""
    names = [n for n in _ANIMATED if n in body.names] or [body.names[-1]]
    t = np.arange(100) * 0.03
    cols = []
    for k, name in enumerate(names):
        ch = body.channel(name)
        mid, amp = (ch.min + ch.max) / 2, (ch.max - ch.min) * 0.3
        cols.append(mid + amp * np.sin(2 * math.pi * 0.5 * t + k))
    return Keyframes(body, names, np.stack(cols, axis=1), frame_period=0.03, name="bench-wave")


def run_loop_bench(seconds: float = 10.0, config: MotionConfig | None = None) -> LoopBenchResult:
    body = load_body()
    driver = SimDriver(history=256)
    driver.connect()
    engine = MotionEngine(body, driver, config=config or MotionConfig())
    stop = threading.Event()
    counters = {"moves": 0, "offsets": 0}

    def lips(t: float) -> tuple[float, float, float]:
        # what a speech source does each tick: look up the viseme under a playback position
        phase = (t * 7.0) % 1.0
        return (30.0 + 120.0 * phase, 20.0 + 60.0 * (phase > 0.5), 20.0)

    def gaze() -> None:  # 30 Hz, like a face tracker
        k = 0
        while not stop.wait(1 / 30):
            k += 1
            yaw, pitch = 0.3 * math.sin(k / 20), 0.1 * math.sin(k / 13)
            engine.set_offset(
                "gaze", head=(0.0, pitch, yaw), deltas={"eyes_yaw": 20 * math.sin(k / 9)}
            )
            counters["offsets"] += 1

    def sway() -> None:  # one hop every 50 ms, like speech sway
        k = 0
        while not stop.wait(0.05):
            k += 1
            engine.set_offset("sway", head=(0.02 * math.sin(k / 3), 0.03 * math.sin(k / 2), 0.0))
            counters["offsets"] += 1

    def animate() -> None:
        while not stop.is_set():
            engine.queue_move(_wave(body))
            counters["moves"] += 1
            while not engine.wait_until_idle(0.1):
                if stop.is_set():
                    return

    engine.set_override_source("lips", ["lip_open", "lip_wide", "lip_narrow"], lips)
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
