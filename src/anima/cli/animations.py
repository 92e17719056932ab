"""`anima animations …`: list, show, validate and reload the XML animation library."""

from __future__ import annotations

import os
import signal
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from anima.cli.common import ConfigOpt, fail
from anima.errors import AnimaError, AnimationFileError

if TYPE_CHECKING:
    from anima.animation import AnimationLibrary
    from anima.body import Body

app = typer.Typer(
    help="The XML animation library: list, show, validate, reload.", no_args_is_help=True
)


def _library(config: Path | None) -> tuple[AnimationLibrary, Body]:
    """The configured library, loaded, and the configured body."""
    from anima.config import load_config
    from anima.runtime import Runtime

    rt = Runtime(load_config(config))
    rt.library.load()
    return rt.library, rt.body


@app.command("list")
def list_animations(config: ConfigOpt = None) -> None:
    """List every animation with its length, channels and file."""
    try:
        lib, _ = _library(config)
    except AnimaError as exc:
        raise fail(exc) from exc
    for name in lib.names():
        a = lib.get(name)
        kind = "posture" if a.is_posture else f"{a.duration:5.2f} s"
        typer.echo(f"{name:28} {kind:>8}  {len(a.channels):2} channels  {Path(a.source).name}")
    for err in lib.last_report.errors:
        typer.secho(f"skipped: {err}", fg=typer.colors.YELLOW, err=True)


@app.command("show")
def show(
    name: Annotated[str, typer.Argument(help="An <animation_name>.")], config: ConfigOpt = None
) -> None:
    """Show one animation: its file, frame period, and each channel's range of values."""
    try:
        lib, body = _library(config)
        a = lib.get(name)
    except AnimaError as exc:
        raise fail(exc) from exc
    typer.echo(f"{a.name}: {a.source}")
    kind = "posture" if a.is_posture else f"{a.frame_count} frames, {a.duration:.2f} s"
    typer.echo(f"  {kind}, {a.frame_period * 1000:g} ms per frame")
    for j, c in enumerate(a.channels):
        col = a.frames[:, j]
        label = body.channels[c - 1].name if c <= len(body) else "?"
        typer.echo(f"  channel{c:<3} {label:18} {col.min():5.0f} … {col.max():5.0f}")


@app.command("validate")
def validate(
    paths: Annotated[list[Path], typer.Argument(help="XML files or folders to check.")],
    config: ConfigOpt = None,
) -> None:
    """Check XML animation files against the configured body; errors name file and element."""
    from anima.animation import parse_animation_file
    from anima.body import load_body
    from anima.config import load_config

    try:
        count = len(load_body(load_config(config).body.checker_ini))
    except AnimaError as exc:
        raise fail(exc) from exc
    files: list[Path] = []
    for p in paths:
        files.extend(sorted(p.glob("*.xml")) if p.is_dir() else [p])
    bad = 0
    for f in files:
        try:
            a = parse_animation_file(f, count)
        except AnimationFileError as exc:
            bad += 1
            typer.secho(f"error: {exc}", fg=typer.colors.RED, err=True)
            continue
        typer.echo(
            f"{f}: ok ({a.name}, {'posture' if a.is_posture else f'{a.frame_count} frames'})"
        )
    if bad:
        raise typer.Exit(code=2)


@app.command("reload")
def reload(
    config: ConfigOpt = None,
    prefix: Annotated[
        str | None,
        typer.Option("--prefix", help="The robot's MQTT prefix (default: the config's)."),
    ] = None,
) -> None:
    """Ask a running `anima serve` to reload its animation folders (SIGHUP).

    Each `anima serve` has its own pid file, named by its robot's MQTT prefix: the one signalled
    is the config's (or `--prefix`'s); with neither given, the only one running.
    """
    from anima import instances

    live, problems = instances.running()
    if prefix is None and (config is not None or os.environ.get("ANIMA_MQTT__PREFIX")):
        from anima.config import load_config

        try:
            prefix = load_config(config).mqtt.prefix
        except AnimaError as exc:
            raise fail(exc) from exc
    if prefix is not None:
        path = instances.pid_file(prefix)
        chosen = [i for i in live if i.path == path]
        where = f"for prefix {prefix!r} ({path})"
    else:
        chosen = live
        where = f"in {instances.folder()}"
    if len(chosen) != 1:
        if chosen:
            names = ", ".join(f"{i.prefix!r} (pid {i.pid})" for i in chosen)
            reason = f"{len(chosen)} are running: {names}; choose one with --prefix"
        else:
            reason = f"no running anima serve found {where}"
            if problems:
                reason += " (" + "; ".join(problems) + ")"
        typer.secho(f"error: {reason}", fg=typer.colors.RED, err=True)
        raise typer.Exit(code=2)
    instance = chosen[0]
    try:
        os.kill(instance.pid, signal.SIGHUP)
    except OSError as exc:
        typer.secho(
            f"error: cannot signal pid {instance.pid}: {exc}", fg=typer.colors.RED, err=True
        )
        raise typer.Exit(code=2) from None
    typer.echo(
        f"asked anima serve {instance.prefix!r} (pid {instance.pid}) to reload its animations; "
        "its log has the result"
    )
