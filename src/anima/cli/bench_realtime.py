"""`anima bench realtime`: the realtime brain's figures against the scripted server on 127.0.0.1
(issue 33's Numbers) — tool call → first moving frame, first audio delta → first sample, lips
against the audio, barge-in by the duplex rules (stop word, held voice, backchannel, an
echo's false onset: voice onset → the voice paused, → cut, the pauses that resumed) with
``audio_end_ms`` against the sink, the loop's missed ticks (registered on ``anima bench``'s
app, as :mod:`anima.cli.bench_links`'s are)."""

from __future__ import annotations

import json
from typing import Annotated

import typer


def bench_realtime(
    quick: Annotated[bool, typer.Option("--quick", help="1 trial per figure (~10 s).")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """The realtime brain on the sim driver and the real clock, the scripted server's voice and
    a scripted person talking over it (20 trials per figure, ~2 minutes; --quick: 1)."""
    from anima.bench.realtime.report import report_json, report_lines, run_realtime_bench

    report = run_realtime_bench(quick=quick)
    if as_json:
        typer.echo(json.dumps(report_json(report), indent=2, default=str))
        return
    for line in report_lines(report):
        typer.echo(line)


def register(app: typer.Typer) -> None:
    app.command("realtime")(bench_realtime)
