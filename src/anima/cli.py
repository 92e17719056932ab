"""The ``anima`` command: serve the runtime, inspect the body, measure the loop."""

from __future__ import annotations

import dataclasses
import json
import logging
import signal
import threading
import time
from pathlib import Path
from types import FrameType
from typing import Annotated, Any

import typer
import yaml

from anima import __version__
from anima.errors import AnimaError

app = typer.Typer(
    name="anima",
    help="anima makes expressive robots come alive: commands in, smooth safe motion out at 100 Hz.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
bench_app = typer.Typer(
    help="Measure anima: each benchmark prints its figures.", no_args_is_help=True
)
body_app = typer.Typer(
    help="Inspect and check body definitions (checker.ini).", no_args_is_help=True
)
app.add_typer(bench_app, name="bench")
app.add_typer(body_app, name="body")

log = logging.getLogger("anima")

ConfigOpt = Annotated[
    Path | None,
    typer.Option(
        "--config",
        "-c",
        envvar="ANIMA_CONFIG",
        help="YAML config file (ANIMA_* variables override it).",
    ),
]


def _fail(exc: AnimaError) -> typer.Exit:
    typer.secho(f"error: {exc}", fg=typer.colors.RED, err=True)
    return typer.Exit(code=2)


@app.command()
def version() -> None:
    """Print anima's version."""
    typer.echo(__version__)


@app.command()
def serve(
    config: ConfigOpt = None,
    record: Annotated[
        Path | None, typer.Option(help="Record every frame sent to this JSON Lines file.")
    ] = None,
    seconds: Annotated[
        float | None, typer.Option(help="Stop after this many seconds (default: run until Ctrl-C).")
    ] = None,
) -> None:
    """Run the runtime on the configured robot (the simulated one by default).

    Logs a status line every few seconds. Ctrl-C or SIGTERM eases the body to its rest
    posture, then exits.
    """
    from anima.config import load_config
    from anima.runtime import Runtime

    try:
        cfg = load_config(config)
        if record is not None:
            cfg = dataclasses.replace(
                cfg, driver=dataclasses.replace(cfg.driver, record=str(record))
            )
        logging.basicConfig(
            level=cfg.log_level.upper(),
            format="%(asctime)s %(levelname)-7s %(name)s: %(message)s",
        )
        runtime = Runtime(cfg)
        stop = threading.Event()

        def on_signal(signum: int, _frame: FrameType | None) -> None:
            log.info("received %s: easing to rest and stopping", signal.Signals(signum).name)
            stop.set()

        signal.signal(signal.SIGTERM, on_signal)
        signal.signal(signal.SIGINT, on_signal)
        runtime.start()
    except AnimaError as exc:
        raise _fail(exc) from exc
    try:
        if runtime.wait_first_tick():
            typer.echo(f"anima ready: {len(runtime.body)} channels on the {cfg.driver.type} robot")
        end = None if seconds is None else time.monotonic() + seconds
        while not stop.is_set():
            wait = cfg.serve.status_interval_s
            if end is not None:
                wait = min(wait, end - time.monotonic())
                if wait <= 0:
                    break
            if not stop.wait(wait):
                log.info(_status_line(runtime))
    finally:
        runtime.stop()
        log.info("stopped")


def _status_line(runtime: Any) -> str:
    s = runtime.engine.stats()
    st = runtime.engine.state()
    move = st.move or "idle"
    driver = "connected" if st.driver_connected else "DISCONNECTED"
    flag = " | ESTOP" if st.estopped else ""
    return (
        f"rate {s.rate_hz:.2f} Hz | period error p99 {s.period_error_p99_ms:.3f} ms "
        f"max {s.period_error_max_ms:.3f} ms | missed {s.missed} | tick p50 "
        f"{s.tick_compute_p50_us:.0f} µs | move {move} | driver {driver}{flag}"
    )


@bench_app.command("loop")
def bench_loop(
    seconds: Annotated[float, typer.Option(min=1.0, help="How long to run the loop.")] = 10.0,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")] = False,
) -> None:
    """Run the 100 Hz loop with every layer active and print its health figures."""
    from anima.bench.loop import run_loop_bench

    r = run_loop_bench(seconds)
    s = r.stats
    if as_json:
        out = s.as_dict() | {
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


@bench_app.command("tick")
def bench_tick(
    ticks: Annotated[int, typer.Option(min=100, help="How many ticks to time.")] = 20_000,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Time the fused tick alone (all layers, 28 channels), ticks back to back."""
    from anima.bench.tick import run_tick_bench

    r = run_tick_bench(ticks)
    if as_json:
        typer.echo(json.dumps(dataclasses.asdict(r), indent=2))
        return
    typer.echo(
        f"fused tick, {r.ticks} ticks back to back: p50 {r.p50_us:.1f} µs, "
        f"p99 {r.p99_us:.1f} µs, mean {r.mean_us:.1f} µs"
    )


@bench_app.command("serve")
def bench_serve(
    idle: Annotated[float, typer.Option(min=0.5, help="Seconds to idle before reading RSS.")] = 5.0,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Start `anima serve` as a subprocess: time to first tick, idle memory, clean exit."""
    from anima.bench.serve import run_serve_bench

    r = run_serve_bench(idle)
    if as_json:
        typer.echo(json.dumps(dataclasses.asdict(r), indent=2))
        return
    typer.echo(f"start to first tick : {r.start_to_first_tick_s * 1000:.0f} ms")
    typer.echo(f"resident memory     : {r.rss_idle_mb:.1f} MB after {r.idle_s:g} s idle")
    typer.echo(f"SIGTERM to exit     : {r.exit_s * 1000:.0f} ms (exit code {r.exit_code})")


@body_app.command("show")
def body_show(
    path: Annotated[
        Path | None, typer.Argument(help="A checker.ini (default: the shipped Nadine body).")
    ] = None,
) -> None:
    """List a body's channels, limits, roles and postures."""
    from rich.console import Console
    from rich.table import Table

    from anima.body import load_body

    try:
        body = load_body(path)
    except AnimaError as exc:
        raise _fail(exc) from exc
    table = Table(title=f"{body.source} — {len(body)} channels, port {body.board.port or '-'}")
    for col in ("#", "name", "default", "min", "max", "role", "speed/s", "calibration"):
        table.add_column(col, no_wrap=col in ("name", "role"))
    for i, ch in enumerate(body.channels, start=1):
        cal = ch.calibration
        table.add_row(
            str(i),
            ch.name,
            f"{ch.default:g}",
            f"{ch.min:g}",
            f"{ch.max:g}",
            "" if ch.role.value == "other" else ch.role.value,
            f"{ch.max_speed or body.default_max_speed:g}",
            "" if cal is None else f"zero {cal.zero:g}, {cal.rad_per_unit:g} rad/unit",
        )
    console = Console()
    console.print(table)
    console.print("postures: " + ", ".join(sorted(body.postures)))


@body_app.command("validate")
def body_validate(path: Annotated[Path, typer.Argument(help="The checker.ini to check.")]) -> None:
    """Parse a checker.ini and report the first error with its file and line."""
    from anima.body import load_body

    try:
        body = load_body(path)
    except AnimaError as exc:
        raise _fail(exc) from exc
    typer.echo(f"{path}: ok ({len(body)} channels, {len(body.postures)} postures)")


@app.command("config")
def config_show(config: ConfigOpt = None) -> None:
    """Print the effective configuration (defaults, file, environment) as YAML."""
    from anima.config import load_config

    try:
        cfg = load_config(config)
    except AnimaError as exc:
        raise _fail(exc) from exc
    data = json.loads(json.dumps(dataclasses.asdict(cfg)))  # tuples → lists for YAML
    typer.echo(yaml.safe_dump(data, sort_keys=False).rstrip())


def main() -> None:
    app()
