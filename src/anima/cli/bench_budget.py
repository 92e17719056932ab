"""`anima bench budget`: issue 34's small-computer budget in one run — idle CPU of the core loop,
of `anima serve` defaults and with the agent in a quiet room, their memory, start → first tick,
and the loop while Whisper decodes (registered on ``anima bench``'s app)."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Annotated

import typer


def bench_budget(
    window: Annotated[float, typer.Option(min=1.0, help="Idle CPU window, seconds.")] = 20.0,
    settle: Annotated[float, typer.Option(min=0.0, help="Least settling before a window.")] = 3.0,
    settle_max: Annotated[
        float, typer.Option(min=0.0, help="Most settling: waiting for a part to stop loading.")
    ] = 60.0,
    starts: Annotated[int, typer.Option(min=1, help="Starts of `anima serve` timed.")] = 5,
    decode: Annotated[
        float, typer.Option(min=1.0, help="Seconds of each loop window (quiet, decoding).")
    ] = 15.0,
    quick: Annotated[
        bool, typer.Option("--quick", help="1 s windows, no settling, one start (~30 s).")
    ] = False,
    json_path: Annotated[
        Path | None, typer.Option("--json", help="Also write the figures to this JSON file.")
    ] = None,
) -> None:
    """Idle CPU (core, defaults, agent), RSS, start → first tick, the loop during decodes."""
    from anima.bench.budget.report import Options, report_lines, run_budget_bench

    options = (
        Options.quick()
        if quick
        else Options(
            settle_s=settle,
            settle_max_s=settle_max,
            window_s=window,
            starts=starts,
            decode_s=decode,
        )
    )
    result = run_budget_bench(options)
    for line in report_lines(result):
        typer.echo(line)
    if json_path is not None:
        json_path.write_text(json.dumps(dataclasses.asdict(result), indent=2, default=str))


def register(app: typer.Typer) -> None:
    app.command("budget")(bench_budget)
