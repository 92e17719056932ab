"""The whole ``anima`` command: every subcommand group (each in its own module), composed
explicitly. ``anima serve`` alone is built without them (:func:`anima.cli.main`)."""

from __future__ import annotations

import typer

from anima.cli import (
    SETTINGS,
    agent,
    animations,
    bench,
    body,
    config,
    doctor,
    fleet,
    humanoid,
    mcp,
    memory,
    serve,
    session,
)
from anima.version import __version__

app = typer.Typer(**SETTINGS)


@app.command()
def version() -> None:
    """Print anima's version."""
    typer.echo(__version__)


app.command("serve")(serve.serve)
app.command("console")(serve.console_command)
app.command("config")(config.config_show)
app.add_typer(animations.app, name="animations")
app.add_typer(agent.app, name="actions")
app.command("agent")(agent.agent_command)
app.add_typer(mcp.app, name="mcp")
app.add_typer(memory.app, name="memory")
app.add_typer(fleet.app, name="fleet")
app.command("doctor")(doctor.doctor_command)
app.command("compile")(doctor.compile_command)
app.add_typer(body.app, name="body")
app.add_typer(bench.app, name="bench")
app.add_typer(humanoid.app, name="humanoid")
app.command("adam")(humanoid.adam)
app.command("record")(session.record_command)
app.command("plot")(session.plot_command)
