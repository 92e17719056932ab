"""Side by side in one run: the anchor's movement-loop tick and anima's fused tick, alternately.

The anchor is the Reachy Mini conversation app's ``MovementManager`` (Pollen Robotics,
Apache-2.0, vendored unchanged from commit 8c3005a: vendor/NOTICE.md) driving Pollen's own
reachy-mini 1.2.11 daemon in its mockup simulation, with a dance playing, speech sway fed
synthetic speech and face tracking fed a synthetic face (anchor_loop.py). anima is
``anima bench loop --json``: its real 100 Hz loop with breathing, blink, a 30 Hz gaze offset,
a 20 Hz sway offset, a lips override and a looping keyframe animation. Both figures are each
tick's compute time inside its own loop: from the tick's wake-up to the end of its work, the
sleep excluded. Rounds alternate anchor, anima, anchor, anima… so both see the same machine.

Usage (from the repository's root):
    .venv/bin/python benchmarks/anchor/side_by_side.py [--rounds 3] [--seconds 15] [--setup]
Needs ``benchmarks/anchor/.venv-anchor`` (``benchmarks/anchor/setup.sh``, or ``--setup``).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Literal

from processes import HERE, AnchorDaemon, HarnessError, run_json

from anima.errors import DriverError
from anima.testing.reachy_daemon import QUIET

ROOT = HERE.parents[1]
ANCHOR_PYTHON = HERE / ".venv-anchor" / "bin" / "python"
ANIMA = ROOT / ".venv" / "bin" / "anima"
SDK_VERSION = "1.2.11"  # the conversation app's uv.lock pins this reachy-mini at that commit
LOOPS = ("anchor", "anima")
TARGET_RATIO = 0.15  # the issue's: anima's tick ≤ 0.15 × the anchor's
SLACK_S = 60.0  # a round's process may take this long beyond its seconds (imports, connect)


@dataclass(frozen=True, kw_only=True)
class Reading:
    """One round of one loop: its tick compute time in its loop, and its rate."""

    who: Literal["anchor", "anima"]
    round: int
    p50_us: float
    p99_us: float
    rate_hz: float
    ticks: int
    note: str  # what else that round saw (the anchor's send cost, anima's missed deadlines)
    p50_without_send_us: float | None = None  # the anchor's tick less its set_target


def check_anchor(python: Path) -> None:
    """One line saying what to do when the anchor's interpreter is missing or incomplete."""
    if not python.is_file():
        raise HarnessError(
            f"the anchor's venv is missing ({python}): run benchmarks/anchor/setup.sh"
        )
    probe = "import importlib.metadata as m, reachy_mini_dances_library as _; "
    probe += "print(m.version('reachy-mini'))"
    done = subprocess.run([str(python), "-c", probe], capture_output=True, text=True, check=False)
    if done.returncode != 0 or done.stdout.strip() != SDK_VERSION:
        raise HarnessError(f"{python} lacks reachy-mini {SDK_VERSION} or the dances library: "
                           "run benchmarks/anchor/setup.sh")  # fmt: skip


def anchor_round(args: argparse.Namespace, daemon: AnchorDaemon, k: int) -> Reading:
    cmd = [str(args.anchor_python), str(HERE / "anchor_loop.py"), "--seconds", str(args.seconds)]
    cmd += ["--zenoh-port", str(daemon.zenoh_port), "--priority", str(args.anchor_priority)]
    data = run_json(cmd, args.seconds + SLACK_S, env=dict(os.environ, **QUIET))
    tick, send = data["tick_compute"], data["set_target"]
    note = (f"set_target p50 {send['p50_us']:.0f} µs, p99 {send['p99_us']:.0f} µs; "
            f"sway {data['sway_offsets_nonzero']}/{data['sway_offsets']} moving, "
            f"face {data['face_updates']}, period max {data['period_max_ms']:.1f} ms")  # fmt: skip
    return Reading(who="anchor", round=k, p50_us=tick["p50_us"], p99_us=tick["p99_us"],
                   rate_hz=data["rate_hz"], ticks=data["ticks"], note=note,
                   p50_without_send_us=data["tick_without_set_target"]["p50_us"])  # fmt: skip


def anima_round(anima: Path, k: int, seconds: float) -> Reading:
    data = run_json(
        [str(anima), "bench", "loop", "--seconds", str(seconds), "--json"], seconds + SLACK_S
    )
    note = (f"missed {data['missed']}, period error p99 {data['period_error_p99_ms']:.2f} ms, "
            f"{data['offset_updates']} offsets, {data['moves_played']} moves; "
            f"tick {data.get('tick', '?').split(' (')[0]}")  # fmt: skip
    return Reading(who="anima", round=k, p50_us=data["tick_compute_p50_us"],
                   p99_us=data["tick_compute_p99_us"], rate_hz=data["rate_hz"],
                   ticks=data["ticks"], note=note)  # fmt: skip


def measure(args: argparse.Namespace) -> list[Reading]:
    readings: list[Reading] = []
    with AnchorDaemon(args.anchor_python) as daemon:
        for k in range(1, args.rounds + 1):
            print(f"round {k}/{args.rounds}: anchor {args.seconds:g} s …", file=sys.stderr)
            readings.append(anchor_round(args, daemon, k))
            print(f"round {k}/{args.rounds}: anima {args.seconds:g} s …", file=sys.stderr)
            readings.append(anima_round(args.anima, k, args.seconds))
    return readings


def median(readings: list[Reading], who: str, field: str) -> float:
    return float(statistics.median(getattr(r, field) for r in readings if r.who == who))


def summary(readings: list[Reading]) -> dict[str, float]:
    """Each loop's median over its rounds, and anima's over the anchor's."""
    fields = ("p50_us", "p99_us", "rate_hz")
    out = {f"{who}_{f}": median(readings, who, f) for who in LOOPS for f in fields}
    out["ratio_p50"] = out["anima_p50_us"] / out["anchor_p50_us"]
    out["ratio_p99"] = out["anima_p99_us"] / out["anchor_p99_us"]
    out["anchor_p50_without_send_us"] = median(readings, "anchor", "p50_without_send_us")
    out["ratio_p50_without_send"] = out["anima_p50_us"] / out["anchor_p50_without_send_us"]
    return out


HEADER = """\
tick = compute time of one tick inside its own 100 Hz loop: wake-up → end of its work, no sleep
anchor = reachy_mini_conversation_app@8c3005a MovementManager → reachy-mini 1.2.11 mockup
         daemon; a dance + speech sway (synthetic speech) + face tracking (synthetic face)
anima  = anima bench loop: keyframes + breathing + blink + gaze + sway + lips → SimDriver"""


def row(label: str, who: str, figures: tuple[float, float, float], rest: str = "") -> str:
    """One line of the table: p50 and p99 (µs), then the rate (Hz)."""
    p50, p99, rate = figures
    return f"{label:>5}  {who:<6} {p50:>8.1f} {p99:>8.1f} {rate:>8.3f} {rest}".rstrip()


def table(readings: list[Reading], load: tuple[str, str], args: argparse.Namespace) -> str:
    s = summary(readings)
    seconds = args.seconds
    fifo = f"; the anchor's loop thread at SCHED_FIFO {args.anchor_priority}" * bool(
        args.anchor_priority
    )
    rounds = max(r.round for r in readings)
    when = time.strftime("%Y-%m-%d %H:%M")
    lines = [
        f"Side by side, {when}, {os.cpu_count()} CPUs: {rounds} rounds of {seconds:g} s each,"
        " alternating anchor → anima",
        HEADER,
        f"load average before: {load[0]}   after: {load[1]}{fifo}",
        "",
        f"{'round':>5}  {'loop':<6} {'p50 µs':>8} {'p99 µs':>8} {'rate Hz':>8} {'ticks':>6}  notes",
    ]
    for r in readings:
        lines.append(
            row(str(r.round), r.who, (r.p50_us, r.p99_us, r.rate_hz), f"{r.ticks:>6}  {r.note}")
        )
    for who in LOOPS:
        lines.append(
            row("med.", who, (s[f"{who}_p50_us"], s[f"{who}_p99_us"], s[f"{who}_rate_hz"]))
        )
    pairs = zip(readings[::2], readings[1::2], strict=True)
    per_round = " ".join(f"{b.p50_us / a.p50_us:.2f}" for a, b in pairs)
    verdict = "met" if s["ratio_p50"] <= TARGET_RATIO else "NOT met"
    return "\n".join([
        *lines,
        "",
        f"anima/anchor tick p50: {s['ratio_p50']:.3f} (target ≤ {TARGET_RATIO}: {verdict});"
        f" per round: {per_round}",
        f"anima/anchor tick p99: {s['ratio_p99']:.3f}",
        f"anima/anchor tick p50 without the anchor's set_target "
        f"({s['anchor_p50_without_send_us']:.1f} µs): {s['ratio_p50_without_send']:.3f}",
    ])  # fmt: skip


def load_average() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def parse() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3, help="rounds of each loop (≥ 1)")
    parser.add_argument("--seconds", type=float, default=15.0, help="length of each round")
    parser.add_argument("--anchor-python", type=Path, default=ANCHOR_PYTHON)
    parser.add_argument("--anima", type=Path, default=ANIMA, help="the anima command to bench")
    parser.add_argument("--anchor-priority", type=int, default=0, metavar="N",
                        help="run the anchor's loop thread at SCHED_FIFO N, as anima runs its "
                             "own (default 0: as the app ships)")  # fmt: skip
    parser.add_argument("--setup", action="store_true", help="run setup.sh first (idempotent)")
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    args = parser.parse_args()
    if args.rounds < 1 or not 1.0 <= args.seconds <= 120.0:
        parser.error("--rounds must be ≥ 1 and --seconds within [1, 120]")
    return args


def interrupt(signum: int, frame: object) -> None:
    """SIGTERM unwinds like Ctrl-C, through the clean-up that stops every child."""
    raise KeyboardInterrupt


def main() -> int:
    args = parse()
    signal.signal(signal.SIGTERM, interrupt)
    try:
        if args.setup:
            subprocess.run([str(HERE / "setup.sh")], check=True)
        check_anchor(args.anchor_python)
        if not args.anima.is_file():
            raise HarnessError(f"anima is missing ({args.anima}): run `make run` or pass --anima")
        before = load_average()
        readings = measure(args)
        load = (before, load_average())
    except (HarnessError, DriverError) as exc:  # DriverError: the daemon did not start
        print(f"side_by_side: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("side_by_side: interrupted; every process it started is stopped", file=sys.stderr)
        return 130
    if args.json:
        rounds = [asdict(r) for r in readings]
        print(json.dumps({"load": load, "summary": summary(readings), "rounds": rounds}, indent=1))
    else:
        print(table(readings, load, args))
    return 0


if __name__ == "__main__":
    sys.exit(main())
