"""`anima config`: the effective configuration."""

from __future__ import annotations

import dataclasses
import json

import typer
import yaml

from anima.cli.common import ConfigOpt, fail
from anima.errors import AnimaError


def config_show(config: ConfigOpt = None) -> None:
    """Print the effective configuration (defaults, file, environment, and the camera's
    figures the body declares where none of those set them) as YAML."""
    from anima.config import load_config

    try:
        cfg = load_config(config)
        from anima.body import load_body

        # the camera's figures the config leaves to the body, as the body declares them
        body = load_body(cfg.body.checker_ini)
        cfg = dataclasses.replace(cfg, vision=cfg.vision.on_body(body.camera))
    except AnimaError as exc:
        raise fail(exc) from exc
    data = json.loads(json.dumps(dataclasses.asdict(cfg)))  # tuples → lists for YAML
    typer.echo(yaml.safe_dump(data, sort_keys=False).rstrip())
