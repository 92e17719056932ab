"""``anima bench budget``: the small-computer budget of issue 34 in one run, and its report.

Runs, one after the other so that none measures another: idle CPU and memory (core, defaults,
agent: :mod:`~anima.bench.budget.idle`), start → first tick over several starts
(:mod:`~anima.bench.budget.start`), and the loop while the recognizer decodes
(:mod:`~anima.bench.budget.decode`). The anchor's figure is printed beside them for context; it
is not measured here.
"""

from __future__ import annotations

import functools
import os
import statistics
import tempfile
from dataclasses import dataclass
from pathlib import Path

from anima.bench.budget.decode import DecodeLoop, LoopWindow, loop_during_decode
from anima.bench.budget.idle import SAMPLE_S, SETTLED_PCT, Idle, idle_core, idle_serve
from anima.bench.budget.start import SAMPLE_MODULES, Start, starts, uncached_bytecode
from anima.bench.motion.floor import FloorResult, run_floor_bench

# Reachy Mini conversation app's movement loop alone, % of one core on this machine kind
# (issue 34, measured side by side in an earlier run; /work/shared/NOTES.md has its tick cost)
ANCHOR_PCT = (6.7, 7.1)
DEFAULTS_TARGET = 0.35  # × the anchor: issue 34's idle budget for `anima serve` defaults
AGENT_TARGET_PCT = 5.0  # issue 34: idle with the agent listening to a quiet room


@dataclass(frozen=True, kw_only=True)
class Options:
    settle_s: float = 3.0  # after a part has started, before its window: at least …
    settle_max_s: float = 60.0  # … and at most, waiting for it to stop loading (idle.settle)
    window_s: float = 20.0  # idle CPU window
    starts: int = 5  # of `anima serve` defaults, for start → first tick
    decode_s: float = 15.0  # each of the two loop windows (quiet, decoding)
    status_interval_s: float | None = None  # serve's status line in the starts (None: 5 s)
    # the one start timed is the defaults part's own (its window then has a 1 s status line)
    start_in_defaults: bool = False
    decode_warm_up: bool = True  # one decode before the loop's windows
    floor_s: float = 30.0  # `anima bench floor`: the machine's own missed deadlines, read beside
    # the agent part's first status line, this long after its start: its missed ticks cover the
    # models loading after the first tick (~12 s after ready in a slow hour)
    agent_status_s: float = 20.0

    @classmethod
    def quick(cls) -> Options:
        """Every part once, as briefly as it still reads a figure: 1 s windows, the start
        timed on the defaults part's process, no warm-up decode — 39 s against 66 s before
        (30 against 39 s of CPU) on the 2-core VM at a load average of 4-6."""
        return cls(
            settle_s=0.5,
            settle_max_s=0.5,
            window_s=1.0,
            starts=1,
            decode_s=1.0,
            status_interval_s=1.0,
            start_in_defaults=True,
            decode_warm_up=False,
            floor_s=1.0,
            agent_status_s=1.0,
        )


@dataclass(frozen=True, kw_only=True)
class BudgetResult:
    options: Options
    load_average: tuple[float, float, float]  # when the run began
    idle: list[Idle]  # core, defaults, agent
    starts: list[Start]
    agent_start: Start | None  # the agent part's own start, models loading after its first tick
    decode: DecodeLoop
    uncached: list[str]  # of SAMPLE_MODULES, those without bytecode (each start compiles them)
    floor: FloorResult  # a bare real-time sleeper's late wake-ups: the machine's own misses


def run_budget_bench(options: Options) -> BudgetResult:
    load = os.getloadavg()
    uncached = uncached_bytecode()
    with tempfile.TemporaryDirectory(prefix="anima-budget-") as tmp:
        work = Path(tmp)
        o = options
        at_rest = functools.partial(
            idle_serve, work, settle_s=o.settle_s, settle_max_s=o.settle_max_s, window_s=o.window_s
        )
        core = idle_core(o.settle_s, o.settle_max_s, o.window_s)
        timed = o.status_interval_s if o.start_in_defaults else None
        defaults, own = at_rest(agent=False, timed_status_s=timed)
        agent, agent_start = at_rest(agent=True, timed_status_s=o.agent_status_s)
        idle = [core, defaults, agent]
        started = [own] if own is not None else starts(work, o.starts, o.status_interval_s)
    decode = loop_during_decode(o.decode_s, o.settle_s, warm_up=o.decode_warm_up)
    floor = run_floor_bench(o.floor_s)
    return BudgetResult(
        options=options, load_average=load, idle=idle, starts=started, agent_start=agent_start,
        decode=decode, uncached=uncached, floor=floor,
    )  # fmt: skip


def _spread(values: list[float], unit: str, scale: float = 1.0) -> str:
    return (
        f"median {statistics.median(values) * scale:.0f} {unit}, "
        f"max {max(values) * scale:.0f} {unit}"
    )


def _loop(w: LoopWindow) -> str:
    what = f"{w.decodes} decodes" if w.decoding else "no decode"
    return (
        f"{what:>11}: {w.missed} missed, lateness p99 {w.late_p99_ms:.2f} ms, "
        f"max {w.late_max_ms:.2f} ms, {w.rate_hz:.2f} Hz over {w.seconds:.1f} s"
    )


def report_lines(r: BudgetResult) -> list[str]:
    o = r.options
    one, five, fifteen = r.load_average
    lines = [
        f"anima bench budget — load average {one:.2f} {five:.2f} {fifteen:.2f} at the start",
        f"idle CPU (% of one core over {o.window_s:g} s, from the first {SAMPLE_S:g} s sample "
        f"under {SETTLED_PCT:g} % after ≥ {o.settle_s:g} s, ≤ {o.settle_max_s:g} s):",
    ]
    for x in r.idle:
        how = f"settled {x.settled_s:.0f} s" if x.settled else f"NOT settled in {x.settled_s:.0f} s"
        lines.append(f"  {x.name:8} {x.cpu.text()}; {how}")
    low, high = ANCHOR_PCT
    lines += [
        f"  anchor   {low}–{high} % (the Reachy Mini conversation app's movement loop alone: "
        "issue 34's figure, NOT measured in this run)",
        f"  targets  defaults ≤ {DEFAULTS_TARGET:g}× the anchor (≈ "
        f"{DEFAULTS_TARGET * low:.1f}–{DEFAULTS_TARGET * high:.1f} %), agent ≤ "
        f"{AGENT_TARGET_PCT:g} %",
        "resident memory after the window (VmRSS; the tree sums each child's, and PSS splits "
        "shared pages):",
    ]
    for x in r.idle:
        lines.append(
            f"  {x.name:8} {x.memory.alone_mb:6.1f} MB alone, {x.memory.tree_mb:6.1f} MB tree, "
            f"{x.memory.tree_pss_mb:6.1f} MB tree PSS"
        )
    agent = next(x for x in r.idle if x.name == "agent")
    lines.append(f"  agent part ran: {agent.check}")
    s = r.starts
    first_line = {x.started.first_tick_line for x in s}
    lines += [
        f"start → first tick ({' / '.join(sorted(first_line))!r} line), `anima serve` "
        f"defaults, {len(s)} starts{' (the defaults part’s own)' if o.start_in_defaults else ''}:",
        f"  first tick : {_spread([x.started.first_tick_s for x in s], 'ms', 1000)}",
        f"  ready      : {_spread([x.started.ready_s for x in s], 'ms', 1000)}",
        f"  loop       : missed {[x.missed for x in s]} (first tick → first status line), "
        f"worst period error {max(x.period_error_max_ms for x in s):.2f} ms",
        "  bytecode   : "
        + (
            f"cached for the {len(SAMPLE_MODULES)} large modules sampled"
            if not r.uncached
            else f"NOT cached for {', '.join(r.uncached)}: each start compiles them while the "
            "loop runs (missed ticks); `make run`'s set-up compiles them"
        ),
    ]
    a = r.agent_start
    if a is not None:
        lines.append(
            f"  with --agent: first tick {a.started.first_tick_s * 1000:.0f} ms, ready "
            f"{a.started.ready_s * 1000:.0f} ms, missed {a.missed} from the first tick to "
            f"{o.agent_status_s:g} s after the start (Whisper, Silero and the wake spotter load "
            f"meanwhile), worst period error {a.period_error_max_ms:.2f} ms"
        )
    d = r.decode
    lines += [
        f"the loop during decodes ({d.recognizer}, {d.speech_s:.1f} s of eSpeak speech, heard "
        f"{d.last_text!r}):",
        "  " + _loop(d.quiet),
        "  " + _loop(d.decoding),
        "this machine's own floor (`anima bench floor`: a bare real-time sleeper, no anima): "
        + r.floor.line(),
    ]
    return lines
