"""`anima actions …`: the agent's vocabulary — every action with its signature and phrases."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from anima.cli.common import ConfigOpt, fail
from anima.errors import AnimaError, CommandRefusedError

if TYPE_CHECKING:
    from anima.agent.actions import ActionRegistry

app = typer.Typer(
    help="The agent's actions: what planners may ask the robot to do.", no_args_is_help=True
)


class _NotConnected:
    """Stands in for the humanoid when actions are only listed: never called."""

    def _refuse(self) -> str:
        raise CommandRefusedError("listing only: no humanoid is connected")

    def speed(self, x: float, y: float, yaw: float, /, *, continuous: bool = False) -> str:
        return self._refuse()

    def stand_motion(self, motion: str, /) -> str:
        return self._refuse()

    def posture(self, pitch: float, roll: float, yaw: float, height: float, /) -> str:
        return self._refuse()

    def set_mode(self, mode: str, /) -> str:
        return self._refuse()


def _registry(config: Path | None, humanoid: bool | None) -> ActionRegistry:
    """The registry the configured agent would use (the humanoid's when one is configured)."""
    from anima.agent.actions import runtime_registry
    from anima.config import load_config
    from anima.runtime import Runtime

    cfg = load_config(config)
    rt = Runtime(cfg)  # touches no hardware: only the body and the animation library
    rt.library.load()
    with_humanoid = cfg.humanoid.type != "none" if humanoid is None else humanoid
    return runtime_registry(
        rt,
        user_actions=cfg.agent.user_actions,
        humanoid=_NotConnected() if with_humanoid else None,
    )


HumanoidOpt = Annotated[
    bool | None,
    typer.Option(
        "--humanoid/--no-humanoid",
        help="Include the humanoid actions (default: when humanoid.type is configured).",
    ),
]


@app.command("list")
def list_actions(
    config: ConfigOpt = None,
    humanoid: HumanoidOpt = None,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print the OpenAI-compatible tools instead.")
    ] = False,
) -> None:
    """List every action: signature, phrases and description."""
    try:
        registry = _registry(config, humanoid)
    except AnimaError as exc:
        raise fail(exc) from exc
    if as_json:
        typer.echo(json.dumps(registry.tools(), indent=2))
        return
    for act in registry:
        typer.secho(act.usage(), bold=True)
        typer.echo(textwrap.indent(act.doc, "    "))
        if act.phrases:
            phrases = ", ".join(f'"{p.text}"' for p in act.phrases)
            typer.echo(
                textwrap.fill(
                    phrases, 96, initial_indent="    phrases: ", subsequent_indent="      "
                )
            )
        typer.echo("")


@app.command("show")
def show(
    name: Annotated[str, typer.Argument(help="An action's name.")],
    config: ConfigOpt = None,
    humanoid: HumanoidOpt = None,
) -> None:
    """Show one action: signature, description, phrases and its JSON schema for LLM tools."""
    try:
        registry = _registry(config, humanoid)
    except AnimaError as exc:
        raise fail(exc) from exc
    act = registry.get(name)
    if act is None:
        typer.secho(
            f"error: no action {name!r} (known: {', '.join(registry.names())})",
            fg=typer.colors.RED,
            err=True,
        )
        raise typer.Exit(code=2)
    typer.secho(act.usage(), bold=True)
    typer.echo(textwrap.indent(act.doc, "    "))
    for phrase in act.phrases:
        args = ", ".join(f"{k}={v!r}" for k, v in phrase.args.items())
        typer.echo(f'    "{phrase.text}"' + (f" → {args}" if args else ""))
    typer.echo(json.dumps(act.tool(), indent=2))
