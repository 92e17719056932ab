"""Run every anima benchmark once and print one JSON summary.

``python benchmarks/run_all.py [SECONDS] [--no-listening]``: the motion, door and hostile
benches (SECONDS each where they take a duration), then the listening ones — ASR, wake, end of
turn and the spoken conversation, each bounded (about 13 minutes together) — unless
``--no-listening``. Run on an otherwise idle machine: the latencies are wall-clock figures."""

from __future__ import annotations

import dataclasses
import json
import platform
import sys

from anima.bench.doors.web import run_web_bench
from anima.bench.drivers.serial import run_serial_bench
from anima.bench.motion.loop import run_loop_bench
from anima.bench.motion.tick import run_tick_bench
from anima.bench.serve.hostile import run_hostile_bench
from anima.bench.serve.serve import run_serve_bench


def listening() -> dict[str, object]:
    """The listening benches, bounded: their figures as ``anima bench … --json`` gives them."""
    from anima.bench.asr.asr import run_asr_bench
    from anima.bench.conversation.conversation import BenchOptions, run_conversation_bench
    from anima.bench.turn.turn import run_turn_bench
    from anima.bench.wake.wake import run_wake_bench
    from anima.listening.wake.asr_spotter import AsrSpotter

    spotter = AsrSpotter()
    try:
        wake = run_wake_bench(spotter, max_s=150.0)
    finally:
        spotter.close()
    return {
        "asr": dataclasses.asdict(run_asr_bench(max_s=170.0)),
        "wake": dataclasses.asdict(wake),
        "turn": [dataclasses.asdict(f) for f in run_turn_bench(budget_s=120.0).figures],
        "conversation": dataclasses.asdict(
            run_conversation_bench(BenchOptions(max_seconds=300.0, false_wake_s=60.0))
        ),
    }


def main() -> None:
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    seconds = float(args[0]) if args else 10.0
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
    if "--no-listening" not in sys.argv:
        summary["listening"] = listening()
    print(json.dumps(summary, indent=2))


if __name__ == "__main__":
    main()
