"""`anima body …`: inspect and check body definitions (checker.ini)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from anima.cli.common import fail
from anima.errors import AnimaError

app = typer.Typer(help="Inspect and check body definitions (checker.ini).", no_args_is_help=True)


@app.command("show")
def body_show(
    path: Annotated[
        Path | None,
        typer.Argument(
            help="A checker.ini, or a shipped body: nadine (the default) or reachy_mini."
        ),
    ] = None,
) -> None:
    """List a body's channels, limits, roles and postures."""
    from rich.console import Console
    from rich.table import Table

    from anima.body import load_body

    try:
        body = load_body(path)
    except AnimaError as exc:
        raise fail(exc) from exc
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


@app.command("validate")
def body_validate(path: Annotated[Path, typer.Argument(help="The checker.ini to check.")]) -> None:
    """Parse a checker.ini and report the first error with its file and line."""
    from anima.body import load_body

    try:
        body = load_body(path)
    except AnimaError as exc:
        raise fail(exc) from exc
    typer.echo(f"{path}: ok ({len(body)} channels, {len(body.postures)} postures)")
