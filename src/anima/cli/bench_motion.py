"""`anima bench loop`, `floor` and `tick`: the 100 Hz loop's health, the machine's own late
wake-ups under it, and the fused tick's cost (registered on ``anima bench``'s app)."""

from __future__ import annotations

import dataclasses
import json
from typing import Annotated

import typer


def bench_loop(
    seconds: Annotated[float, typer.Option(min=1.0, help="How long to run the loop.")] = 10.0,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")] = False,
) -> None:
    """Run the 100 Hz loop with every layer active and print its health figures."""
    from anima.bench.motion.loop import run_loop_bench
    from anima.motion import compiled

    r = run_loop_bench(seconds)
    s = r.stats
    if as_json:
        out = s.as_dict() | {
            "tick": compiled.status(),
            "moves_played": r.moves_played,
            "offset_updates": r.offset_updates,
            "frames_sent": r.frames_sent,
            "faults": r.faults,
        }
        typer.echo(json.dumps(out, indent=2))
        return
    from rich.console import Console
    from rich.table import Table

    table = Table(title=f"anima bench loop — {s.elapsed_s:.1f} s, all layers on 28 channels")
    table.add_column("figure")
    table.add_column("value", justify="right")
    rows = [
        (
            "achieved rate",
            f"{s.rate_hz:.3f} Hz (target {s.target_hz:g}, "
            f"{100 * (s.rate_hz / s.target_hz - 1):+.3f} %)",
        ),
        ("period error p50", f"{s.period_error_p50_ms:.3f} ms"),
        ("period error p99", f"{s.period_error_p99_ms:.3f} ms"),
        ("period error max", f"{s.period_error_max_ms:.3f} ms"),
        ("missed deadlines", str(s.missed)),
        ("the tick runs", compiled.status()),
        ("fused tick p50", f"{s.tick_compute_p50_us:.1f} µs"),
        ("fused tick p99", f"{s.tick_compute_p99_us:.1f} µs"),
        ("ticks", str(s.ticks)),
        ("frames sent", str(r.frames_sent)),
        ("animations played", str(r.moves_played)),
        ("offset updates", str(r.offset_updates)),
        ("faults", str(r.faults)),
    ]
    for k, v in rows:
        table.add_row(k, v)
    Console().print(table)


def bench_floor(
    seconds: Annotated[float, typer.Option(min=0.1, max=3600.0, help="How long to sleep.")] = 60.0,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """How late this machine wakes a real-time thread with nothing else running: the floor under
    every missed-tick figure."""
    from anima.bench.motion.floor import run_floor_bench

    r = run_floor_bench(seconds)
    if as_json:
        typer.echo(json.dumps(dataclasses.asdict(r), indent=2))
        return
    typer.echo(r.line())


def bench_tick(
    ticks: Annotated[int, typer.Option(min=100, help="How many ticks to time.")] = 20_000,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Time the fused tick alone (all layers, 28 channels), ticks back to back."""
    from anima.bench.motion.tick import run_tick_bench

    r = run_tick_bench(ticks)
    if as_json:
        typer.echo(json.dumps(dataclasses.asdict(r), indent=2))
        return
    typer.echo(
        f"fused tick, {r.ticks} ticks back to back: p50 {r.p50_us:.1f} µs, "
        f"p99 {r.p99_us:.1f} µs, mean {r.mean_us:.1f} µs"
    )


def register(app: typer.Typer) -> None:
    app.command("loop")(bench_loop)
    app.command("floor")(bench_floor)
    app.command("tick")(bench_tick)
