"""`anima bench attention`: social attention's figures, per condition (issue 32's Numbers):
the face engines' cost and detection rate, capture → gaze command latency with the loop's
missed ticks, the loop's lateness with vision and without (interleaved blocks), the ticks
missed while vision starts (its camera in the vision process or here), the closed loop
of a face that jumps 30° (latency compensation on and off), the voice direction's error per
room, and the turn toward a new speaker (registered on ``anima bench``'s app, as
:mod:`anima.cli.bench_links`'s are)."""

from __future__ import annotations

import dataclasses
import json
from enum import StrEnum
from typing import Annotated, Any

import typer


class Part(StrEnum):
    all = "all"
    faces = "faces"
    gaze = "gaze"
    lateness = "lateness"
    start = "start"
    loop = "loop"
    voice = "voice"
    speaker = "speaker"


def bench_attention(
    part: Annotated[Part, typer.Option(help="Which figures (all: every one, ~3 minutes).")] = (
        Part.all
    ),
    seconds: Annotated[
        float, typer.Option(min=1.0, help="Real seconds of the capture → gaze run.")
    ] = 10.0,
    quick: Annotated[
        bool, typer.Option("--quick", help="Fewer frames and rooms: a rough look in seconds.")
    ] = False,
    blocks: Annotated[
        int,
        typer.Option(min=1, max=200, help="Lateness: blocks of each condition (5 s each)."),
    ] = 8,
    starts: Annotated[
        int,
        typer.Option(min=1, max=100, help="Start: runtimes started with each condition."),
    ] = 10,
    in_process: Annotated[
        bool,
        typer.Option(
            "--detector-in-process",
            help="Gaze and lateness: the detector in the runtime's process (vision.process: "
            "false), for the comparison with its own process (the default).",
        ),
    ] = False,
    camera_here: Annotated[
        bool,
        typer.Option(
            "--camera-here",
            help="Gaze: a camera thread in the runtime's process hands frames to the detector's "
            "process (as the simulated head camera does), not the camera in the vision process.",
        ),
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Faces (ms a frame on one core, detection rate), capture → gaze p95 and missed ticks, a
    30° face jump in the closed loop, voice direction error per room, the turn to a new
    speaker."""
    out: dict[str, Any] = {}
    lines: list[str] = []
    if part in (Part.all, Part.faces):
        from anima.bench.attention import faces

        r = (
            faces.run_face_bench(frames=12, repeats=1, haar_frames=6, lfw=10)
            if quick
            else faces.run_face_bench()
        )
        out["faces"] = dataclasses.asdict(r)
        lines += faces.report_lines(r)
    if part in (Part.all, Part.gaze):
        from anima.bench.attention import gaze

        g = gaze.run_gaze_latency(
            min(seconds, 3.0) if quick else seconds,
            process=not in_process,
            camera_there=not camera_here,
        )
        out["gaze"] = dataclasses.asdict(g)
        lines += gaze.report_lines(g)
    if part in (Part.all, Part.lateness):
        from anima.bench.attention import lateness

        for source in ("playback", "sim"):
            ab = (
                lateness.run_lateness_ab(
                    blocks=2, block_s=2.0, source=source, process=not in_process
                )
                if quick
                else lateness.run_lateness_ab(
                    blocks,
                    source=source,
                    process=not in_process,
                    progress=lambda s: typer.echo(s, err=True),
                )
            )
            out[f"lateness_{source}"] = dataclasses.asdict(ab)
            lines += lateness.report_lines(ab)
    if part in (Part.all, Part.start):
        from anima.bench.attention import start

        began = start.run_starts(1 if quick else starts, progress=lambda s: typer.echo(s, err=True))
        out["start"] = [dataclasses.asdict(r) for r in began]
        lines += start.report_lines(began)
    if part in (Part.all, Part.loop):
        from anima.bench.attention import closed_loop

        runs = closed_loop.run(closed_loop.CONDITIONS[:2] if quick else closed_loop.CONDITIONS)
        out["closed_loop"] = [dataclasses.asdict(j) for j in runs]
        closed_loop.report(runs, lines.append)
    if part in (Part.all, Part.voice):
        from anima.bench.attention import doa

        d = (
            doa.run_doa_bench(rt60s=(0.3,), snrs=(10.0,), own_s=5.0)
            if quick
            else doa.run_doa_bench(progress=lambda s: typer.echo(s, err=True))
        )
        out["voice"] = dataclasses.asdict(d)
        lines += doa.report_lines(d)
    if part in (Part.all, Part.speaker):
        from anima.bench.attention import speaker

        turns = (
            [speaker.run_speaker_turn(-40.0, 50.0, mount="head")]
            if quick
            else speaker.run_set("dev") + speaker.run_set("heldout")
        )
        out["speaker"] = [dataclasses.asdict(t) for t in turns]
        lines += speaker.report_lines(turns)
    if as_json:
        typer.echo(json.dumps(out, indent=2, default=str))
        return
    for line in lines:
        typer.echo(line)


def register(app: typer.Typer) -> None:
    app.command("attention")(bench_attention)
