"""Each missed tick of the realtime session trials, set against the machine's own floor in the
same seconds: ``cyclictest`` (Debian's rt-tests: a C thread at real-time priority 80, memory
locked, waking every 10 ms) runs beside anima and logs every wake-up; each tick anima's loop
misses is printed with the nearest of cyclictest's wake-ups later than 5 ms. A miss that falls
with a late wake of a C program doing nothing else is the virtual machine's, not anima's.

    .venv/bin/python benchmarks/missed_vs_floor.py [--trials 15] [--seconds 170]
    .venv/bin/python benchmarks/missed_vs_floor.py --whole --seconds 450
    .venv/bin/python benchmarks/missed_vs_floor.py --conversation 300 --seconds 420 --cores 2

``--whole``: all of ``anima bench realtime`` (its Gemini trials and voice runs too), not only
the session trials; ``--conversation S``: ``anima bench conversation`` for S seconds of trials
instead (issue 34's 5 minutes of conversation); ``--cores 2``: a cyclictest thread pinned on each
core, not one thread wherever the scheduler puts it. ``--seconds`` must cover the run (about 9 s a
trial; ~7 minutes whole).
Needs ``cyclictest`` (``apt-get install rt-tests``) and root for its priority.
docs/realtime.md has a run's figures.
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from anima.bench.realtime.session import run_session_bench
from anima.motion import timer

LATE_MS = 5.0  # a cyclictest wake-up later than this is listed
INTERVAL_S = 0.01  # cyclictest's period, as anima's loop


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=15)
    parser.add_argument("--seconds", type=int, default=170)
    parser.add_argument("--whole", action="store_true", help="all of anima bench realtime")
    parser.add_argument(
        "--conversation", type=float, default=0.0, help="anima bench conversation, these seconds"
    )
    parser.add_argument(
        "--cores", type=int, default=1, help="cyclictest threads, one pinned on each core"
    )
    args = parser.parse_args()
    if shutil.which("cyclictest") is None:
        print("cyclictest is not installed: apt-get install rt-tests", file=sys.stderr)
        return 2
    misses: list[tuple[float, int, float]] = []  # (monotonic time, ticks missed, lateness s)
    wait = timer.LoopTimer.wait

    def logged(self: timer.LoopTimer, interrupt: Any = None) -> Any:
        before = self.missed
        out = wait(self, interrupt) if interrupt is not None else wait(self)
        if self.missed > before:
            late = float(self._errors[(self.ticks - 1) % self._window])
            misses.append((time.monotonic(), self.missed - before, late))
        return out

    timer.LoopTimer.wait = logged  # type: ignore[method-assign]
    with tempfile.TemporaryDirectory() as tmp:
        log_path = Path(tmp) / "cyclictest.log"
        with log_path.open("w") as log:
            t0 = time.monotonic()
            command = ["cyclictest", "-v", "-m", "-q", "-p", "80", "-i", "10000"]
            command += ["-t", str(args.cores)] + (["-a"] if args.cores > 1 else [])
            floor = subprocess.Popen([*command, "-D", f"{args.seconds}s"], stdout=log)
            time.sleep(1.0)
            began = time.monotonic()
            ticks, missed, what = _trials(args)
            ended = time.monotonic()
            floor.wait()
        late = []  # (monotonic time, ms, core) of each late wake-up; its time from its count
        for line in log_path.read_text().splitlines():
            m = re.match(r"\s*(\d+):\s*(\d+):\s*(\d+)", line)
            if m and int(m.group(3)) > LATE_MS * 1000:
                core, n, us = int(m.group(1)), int(m.group(2)), int(m.group(3))
                late.append((t0 + (n + 1) * INTERVAL_S + us / 1e6, us / 1000, core))
    print(
        f"{what} {ended - began:.0f} s: anima's loop {ticks or 'its'} ticks counted by the "
        f"trials, {missed} missed (every miss over the run is listed below)"
    )
    inside = [(t, ms, core) for t, ms, core in late if began <= t <= ended]
    watched = "one thread" if args.cores == 1 else f"a thread on each of {args.cores} cores"
    print(
        f"cyclictest ({watched}), {args.seconds} s: {len(late)} wake-ups later than "
        f"{LATE_MS:g} ms, {len(inside)} during the trials"
        + "".join(f"; {ms:.1f} ms at +{t - began:.2f} s (core {c})" for t, ms, c in inside)
    )
    for t, count, lateness in misses:
        if not began <= t <= ended:
            continue
        near = min(late, key=lambda w: abs(w[0] - t), default=None)
        said = (
            "none"
            if near is None
            else f"{near[1]:.1f} ms on core {near[2]}, {1000 * (near[0] - t):+.0f} ms off"
        )
        print(
            f"anima missed {count} at +{t - began:.2f} s ({lateness * 1000:.1f} ms late); "
            f"cyclictest's nearest late wake-up: {said}"
        )
    return 0


def _trials(args: argparse.Namespace) -> tuple[int, int, str]:
    """Run what ``args`` ask for: (ticks the trials counted, those missed, what ran)."""
    if args.conversation > 0:
        from anima.bench.conversation.conversation import BenchOptions, run_conversation_bench

        talk = run_conversation_bench(BenchOptions(max_seconds=args.conversation, false_wake_s=0.0))
        lateness = f"lateness p99 {talk.loop_p99_ms:.2f} ms, max {talk.loop_max_ms:.2f} ms"
        return 0, talk.loop_missed, f"the conversation trials ({lateness})"
    if args.whole:
        from anima.bench.realtime.report import run_realtime_bench

        whole = run_realtime_bench()
        ticks = whole.session.ticks + whole.gemini.ticks
        missed = whole.session.missed_ticks + whole.gemini.missed_ticks
        return ticks, missed, "the whole realtime bench"
    figures = run_session_bench(trials=args.trials)
    return figures.ticks, figures.missed_ticks, "session trials"


if __name__ == "__main__":
    sys.exit(main())
