"""`anima bench serial|grpc|mcp|reachy`: the benchmarks of a link to a robot or a client — a
servo board over a pseudo-terminal, the humanoid's gRPC, an AI agent over MCP, Pollen's Reachy
daemon (registered on ``anima bench``'s app, as :mod:`anima.cli.bench_listening`'s are)."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Annotated

import typer


def bench_serial(
    seconds: Annotated[float, typer.Option(min=1.0, help="How long to run.")] = 10.0,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Drive a pseudo-terminal servo board at 100 Hz: packets per second received, write cost."""
    from anima.bench.drivers.serial import run_serial_bench

    r = run_serial_bench(seconds)
    if as_json:
        typer.echo(json.dumps(dataclasses.asdict(r), indent=2))
        return
    typer.echo(
        f"packets received : {r.packets_per_s:.4f} /s (target {r.target_hz:g}), "
        f"{r.packets} in {r.span_s:.2f} s, {r.bad_packets} bad, {r.dropped} dropped"
    )
    typer.echo(f"write per packet : p50 {r.write_p50_us:.1f} µs, p99 {r.write_p99_us:.1f} µs")
    typer.echo(
        f"loop             : {r.loop_rate_hz:.3f} Hz, period error p99 "
        f"{r.period_error_p99_ms:.3f} ms, {r.missed} missed, {r.faults} faults"
    )


def bench_grpc(
    calls: Annotated[int, typer.Option(min=1, help="GetRobotState calls per server.")] = 2000,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """GetRobotState p50/p99 and calls/s, next to a trivial servicer of the same shape."""
    from anima.bench.doors.grpc import run_grpc_bench

    r = run_grpc_bench(calls)
    if as_json:
        typer.echo(json.dumps(dataclasses.asdict(r), indent=2))
        return
    for label, f in (("simulated Adam", r.ours), ("trivial", r.trivial)):
        typer.echo(
            f"{label:15} p50 {f.p50_us:.0f} µs, p99 {f.p99_us:.0f} µs, {f.calls_per_s:.0f} calls/s"
        )
    typer.echo(
        f"ratio           p50 {r.ratio_p50:.2f}×, p99 {r.ratio_p99:.2f}×, rate {r.ratio_rate:.2f}× "
        f"(target ≤ {r.target_ratio:g}×)"
    )


def bench_mcp(
    calls: Annotated[int, typer.Option(min=1, max=10_000, help="look_at tool calls.")] = 100,
    cancels: Annotated[int, typer.Option(min=1, max=200, help="Cancelled wave calls.")] = 15,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """MCP over HTTP with the official client: tool call → first frame, cancel → held."""
    from anima.bench.doors.mcp import figures_lines, run_mcp_bench

    r = run_mcp_bench(calls, cancels)
    if as_json:
        typer.echo(json.dumps(dataclasses.asdict(r), indent=2))
        return
    for line in figures_lines(r):
        typer.echo(line)


def bench_reachy(
    seconds: Annotated[float, typer.Option(min=1, max=3600, help="Seconds of animations.")] = 20.0,
    rate_hz: Annotated[
        float, typer.Option("--rate", min=1, max=200, help="The driver's targets per second.")
    ] = 50.0,
    host: Annotated[
        str | None, typer.Option(help="A running daemon (a robot's, or --sim); else the mockup.")
    ] = None,
    port: Annotated[int, typer.Option(min=1, max=65535, help="Its port.")] = 8000,
    daemon: Annotated[
        Path | None, typer.Option(help="reachy-mini-daemon to start (default .venv-reachy's).")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Pollen's Reachy Mini daemon driven: sent → reported lag, the rate applied, the loop."""
    from anima.bench.drivers.reachy import figures_lines, run_reachy_bench

    r = run_reachy_bench(seconds, rate_hz=rate_hz, host=host, port=port, daemon=daemon)
    if as_json:
        typer.echo(json.dumps(dataclasses.asdict(r), indent=2))
        return
    for line in figures_lines(r):
        typer.echo(line)


def register(app: typer.Typer) -> None:
    app.command("serial")(bench_serial)
    app.command("grpc")(bench_grpc)
    app.command("mcp")(bench_mcp)
    app.command("reachy")(bench_reachy)
