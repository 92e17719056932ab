"""The 100 Hz loop while the library reloads, and then plays, the largest allowed animation.

Issue 12 item 6: SIGHUP with a 20 MB animation (5 M frames) stalled the loop 430–510 ms (124
missed ticks). This runs a real Runtime on the sim driver (speech, MQTT and web off), writes an
animation of ``--frames`` × ``--channels`` values into a fresh folder, reloads (on a thread, as
SIGHUP does), plays it, and prints for each step the missed deadlines (``engine.stats()``) and
the largest gap between frames the driver received; then the same for a pure-Python busy loop
of 0.5 s on a thread, the floor any CPU-bound thread costs through the GIL on this machine.

    python benchmarks/animation_reload.py                    # 100,000 frames × 20 channels
    python benchmarks/animation_reload.py --frames 5000000 --channels 1   # the 20 MB file
"""

from __future__ import annotations

import argparse
import itertools
import json
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

from anima.config import load_config
from anima.drivers.base import Frame
from anima.drivers.sim import SimDriver
from anima.runtime import Runtime


class TimedSim(SimDriver):
    """The sim driver, noting when each frame arrived."""

    def __init__(self) -> None:
        super().__init__()
        self.times: list[float] = []

    def send(self, frame: Frame) -> Frame:
        self.times.append(time.perf_counter())
        return super().send(frame)


def write_animation(folder: Path, frames: int, channels: int) -> Path:
    values = " ".join(["128", "130"] * (frames // 2) + ["128"] * (frames % 2))
    path = folder / "big.xml"
    path.write_text(
        "<animation><animation_name>big</animation_name>"
        + "".join(f"<channel{c}>{values}</channel{c}>" for c in range(1, channels + 1))
        + "</animation>"
    )
    return path


def measure(rt: Runtime, driver: TimedSim, step: Callable[[], object]) -> dict[str, float]:
    before, first = rt.engine.stats(), len(driver.times)
    t0 = time.perf_counter()
    worker = threading.Thread(target=step)
    worker.start()
    worker.join()
    took = time.perf_counter() - t0
    time.sleep(1.0)  # let a move start and the loop settle
    times = driver.times[first:]
    gap = max(b - a for a, b in itertools.pairwise(times))
    return {
        "took_ms": round(took * 1000, 1),
        "missed_ticks": rt.engine.stats().missed - before.missed,
        "largest_gap_ms": round(gap * 1000, 1),
    }


def busy() -> None:
    end = time.monotonic() + 0.5
    while time.monotonic() < end:
        pass


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frames", type=int, default=100_000)
    parser.add_argument("--channels", type=int, default=20)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        env = {
            "ANIMA_SPEECH__ENABLED": "false",
            "ANIMA_MQTT__ENABLED": "false",
            "ANIMA_WEB__ENABLED": "false",
            "ANIMA_ANIMATION__FOLDERS": f"[{folder}]",
        }
        driver = TimedSim()
        rt = Runtime(load_config(env=env), driver=driver)
        rt.start()
        try:
            rt.wait_first_tick()
            time.sleep(1.0)
            path = write_animation(folder, args.frames, args.channels)
            result: dict[str, object] = {
                "file_mb": round(path.stat().st_size / 1e6, 1),
                "frames": args.frames,
                "channels": args.channels,
            }
            summary: list[str] = []
            result["reload"] = measure(rt, driver, lambda: summary.append(rt.reload_animations()))
            result["loaded"] = "big" in rt.library
            result["report"] = summary[0][:200]
            if "big" in rt.library:
                result["play"] = measure(rt, driver, lambda: rt.behaviour.play_animation("big"))
                rt.engine.clear()
            result["busy_loop_0.5s"] = measure(rt, driver, busy)
        finally:
            rt.stop(ease=False)
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
