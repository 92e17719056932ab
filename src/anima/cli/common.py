"""What the `anima` subcommands share."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from anima.errors import AnimaError

ConfigOpt = Annotated[
    Path | None,
    typer.Option(
        "--config",
        "-c",
        envvar="ANIMA_CONFIG",
        help="YAML config file (ANIMA_* variables override it).",
    ),
]


def fail(exc: AnimaError) -> typer.Exit:
    """Print an anima error in one line and return the exit to raise (code 2)."""
    typer.secho(f"error: {exc}", fg=typer.colors.RED, err=True)
    return typer.Exit(code=2)
