"""Run every anima benchmark once and print one JSON summary."""

from __future__ import annotations

import dataclasses
import json
import platform
import sys

from anima.bench.hostile import run_hostile_bench
from anima.bench.loop import run_loop_bench
from anima.bench.serial import run_serial_bench
from anima.bench.serve import run_serve_bench
from anima.bench.tick import run_tick_bench
from anima.bench.web import run_web_bench


def main() -> None:
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 10.0
    loop = run_loop_bench(seconds)
    tick = run_tick_bench()
    serve = run_serve_bench(idle_s=6.0)  # past serve's first status line, at 5 s
    serial = run_serial_bench(seconds)
    web = run_web_bench(clients=3, seconds=min(seconds, 5.0))
    hostile = run_hostile_bench()
    summary = {
        "machine": {"python": platform.python_version(), "cpus": platform.machine()},
        "loop": loop.stats.as_dict() | {"faults": loop.faults, "moves_played": loop.moves_played},
        "tick": dataclasses.asdict(tick),
        "serve": dataclasses.asdict(serve),
        "serial": dataclasses.asdict(serial),
        "web": dataclasses.asdict(web),
        "hostile": dataclasses.asdict(hostile),
    }
    print(json.dumps(summary, indent=2))


if __name__ == "__main__":
    main()
