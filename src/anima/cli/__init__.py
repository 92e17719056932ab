"""The ``anima`` command: serve the runtime, inspect the body and animations, measure the loop.

:mod:`anima.cli.full` composes every subcommand group (each in its own module) into :data:`app`.
``anima serve …`` builds serve's command alone: importing the other groups and having typer
build all of their commands cost ~0.15 s before the robot's first tick, in every start.
"""

from __future__ import annotations

import sys
from typing import Any

SETTINGS: dict[str, Any] = {
    "name": "anima",
    "help": "anima makes expressive robots come alive: commands in, smooth safe motion out at "
    "100 Hz.",
    "no_args_is_help": True,
    "add_completion": False,
    "pretty_exceptions_enable": False,
}


def main() -> None:
    """The command line: serve's command alone for ``anima serve …``, else the whole app."""
    if sys.argv[1:2] == ["serve"]:
        import typer

        from anima.cli.serve import serve

        single = typer.Typer(**SETTINGS)
        single.command("serve")(serve)

        @single.callback()
        def _group() -> None:
            """anima makes expressive robots come alive."""  # keeps `serve` a subcommand

        single()
        return
    from anima.cli.full import app

    app()


def __getattr__(name: str) -> Any:
    if name == "app":  # the whole command, for `from anima.cli import app` (CliRunner in tests)
        from anima.cli.full import app

        return app
    raise AttributeError(f"module 'anima.cli' has no attribute {name!r}")
