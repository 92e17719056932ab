"""`anima record` and `anima plot`: capture what the robot did, then look at it."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from anima.cli.common import ConfigOpt, fail
from anima.errors import AnimaError


def record_command(
    out: Annotated[Path, typer.Argument(help="The JSON Lines file to write.")],
    seconds: Annotated[float, typer.Option(help="How long to record.")] = 10.0,
    url: Annotated[
        str | None,
        typer.Option(
            help="The running runtime's dashboard (default: the config's web host and port, "
            "so ANIMA_WEB__PORT applies)."
        ),
    ] = None,
    token: Annotated[
        str | None, typer.Option(envvar="ANIMA_WEB__TOKEN", help="The dashboard's token.")
    ] = None,
    local: Annotated[
        bool, typer.Option("--local", help="Run a runtime here and record it instead.")
    ] = False,
    config: ConfigOpt = None,
) -> None:
    """Record every commanded frame (the loop's 100 Hz), the state and the events (the
    dashboard's WebSocket) to a file for `anima plot`."""
    from anima.config import load_config
    from anima.session.record import dashboard_url, record_local, record_remote

    if seconds <= 0:
        raise typer.BadParameter("must be > 0", param_hint="--seconds")
    try:
        cfg = load_config(config)
        if local:
            from anima.runtime import Runtime

            with Runtime(cfg) as runtime:
                runtime.wait_first_tick()
                writer = record_local(runtime, out, seconds)
        else:
            writer = record_remote(
                url or dashboard_url(cfg.web), out, seconds, token or cfg.web.token
            )
    except AnimaError as exc:
        raise fail(exc) from exc
    typer.echo(
        f"recorded {writer.frames} frames, {writer.states} states and {writer.events} events "
        f"to {out}"
    )


def plot_command(
    session: Annotated[Path, typer.Argument(help="A recording from `anima record`.")],
    out: Annotated[Path | None, typer.Option("-o", "--out", help="The PNG to write.")] = None,
    width: Annotated[int, typer.Option(help="Pixels.")] = 1200,
    height: Annotated[int, typer.Option(help="Pixels.")] = 800,
) -> None:
    """Plot channel trajectories with speech, animations and estop shaded (matplotlib)."""
    from anima.session.plot import plot_session

    target = out or session.with_suffix(".png")
    try:
        plot_session(session, target, width=width, height=height)
    except AnimaError as exc:
        raise fail(exc) from exc
    typer.echo(f"wrote {target}")
