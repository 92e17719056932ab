"""``anima doctor``: what this machine has of what the configured robot needs (docs/fleet.md)."""

from __future__ import annotations

import json
import logging
from typing import Annotated

import typer

from anima.cli.common import ConfigOpt, fail
from anima.cli.serve import BodyOpt, BrokerOpt, HumanoidOpt, MqttPortOpt, WebPortOpt
from anima.errors import AnimaError


def doctor_command(
    config: ConfigOpt = None,
    audio_out: Annotated[
        str | None, typer.Option("--audio-out", help="As anima serve's: null for no sound card.")
    ] = None,
    driver: Annotated[str | None, typer.Option(help="As anima serve's: sim, serial, …")] = None,
    agent: Annotated[bool, typer.Option("--agent", help="Check the voice agent's too.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
    humanoid: HumanoidOpt = None,
    broker: BrokerOpt = None,
    mqtt_port: MqttPortOpt = None,
    web_port: WebPortOpt = None,
    body: BodyOpt = None,
) -> None:
    """Check this machine for everything the configured robot uses, one line per check with the
    fix; exit 0 when every needed piece is there (warnings named: what serve runs without, as
    no sound card with audio out auto), 2 naming what is missing."""
    from anima.cli.serve import configure
    from anima.doctor import Status, run_checks

    logging.disable(logging.WARNING)  # the checks say it; the engines' own warnings would repeat
    try:
        # the config anima serve would run with these flags: the same composition
        cfg = configure(
            config,
            record=None,
            driver=driver,
            port=None,
            broker=broker,
            mqtt=True,
            audio_out=audio_out,
            humanoid=humanoid,
            agent=agent,
            body=body,
            web_port=web_port,
            mqtt_port=mqtt_port,
        )
        checks = run_checks(cfg)
    except AnimaError as exc:
        raise fail(exc) from None
    finally:
        logging.disable(logging.NOTSET)
    failed = [c for c in checks if c.status is Status.FAIL]
    warned = sorted({c.name for c in checks if c.status is Status.WARN})
    if as_json:
        typer.echo(json.dumps([{"name": c.name, "status": c.status.value, "detail": c.detail,
                                "fix": c.fix} for c in checks], indent=2))  # fmt: skip
    else:
        for c in checks:
            typer.echo(c.line())
        if failed:
            typer.echo(f"missing: {', '.join(c.name for c in failed)}")
        elif warned:
            typer.echo(f"all that this robot needs is here; warnings: {', '.join(warned)}")
        else:
            typer.echo("all that this robot needs is here")
    if failed:
        raise typer.Exit(code=2)


def compile_command(
    force: Annotated[bool, typer.Option("--force", help="Build again even when built.")] = False,
    status: Annotated[
        bool, typer.Option("--status", help="Say how the tick runs; build nothing.")
    ] = False,
    quiet: Annotated[bool, typer.Option("--quiet", help="Print only errors.")] = False,
) -> None:
    """Compile the motion tick with mypyc for the sources as they are (make run and make test
    do it; ~30 s, skipped when built): about half the tick's cost in the loop (docs/motion.md).
    Exit 1 saying what is missing (a C compiler, Python's headers, mypy); plain Python runs
    then."""
    from anima.motion import compiled

    if status:
        typer.echo(f"motion tick: {compiled.status()}")
        return
    try:
        compiled.build(force=force, quiet=quiet)
    except (compiled.BuildError, OSError) as exc:
        typer.echo(f"anima compile: {exc}; the motion tick runs as plain Python", err=True)
        raise typer.Exit(1) from None
