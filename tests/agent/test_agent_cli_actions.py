"""`anima actions list|show` in-process (the group is mounted here as it is in anima.cli)."""

from __future__ import annotations

import json
import os
import textwrap
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from anima.cli import agent

pytestmark = pytest.mark.fast

root = typer.Typer()
root.add_typer(agent.app, name="actions")
runner = CliRunner()


@pytest.fixture(autouse=True)
def _no_config_from_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in list(os.environ):
        if name.startswith("ANIMA_"):
            monkeypatch.delenv(name)


def test_list_shows_signature_description_and_phrases() -> None:
    result = runner.invoke(root, ["actions", "list"])
    assert result.exit_code == 0, result.output
    out = result.output
    assert "say(text: str)\n    Say something out loud" in out
    assert '"say hello"' in out
    assert "play_animation(name: Literal[" in out
    assert "'nod'" in out
    assert "SHUTDOWN_NADINE" not in out  # not a gesture to ask for
    assert "walk_forward" not in out  # no humanoid configured
    with_humanoid = runner.invoke(root, ["actions", "list", "--humanoid"])
    assert "walk_forward(seconds: float = 2.0, speed: float = 0.3)" in with_humanoid.output


def test_list_json_is_the_tools_an_llm_gets() -> None:
    result = runner.invoke(root, ["actions", "list", "--json"])
    assert result.exit_code == 0
    tools = json.loads(result.output)
    assert {t["function"]["name"] for t in tools} >= {"say", "play_animation", "finish"}


def test_show_one_action_and_refuse_an_unknown_one() -> None:
    result = runner.invoke(root, ["actions", "show", "wait"])
    assert result.exit_code == 0
    assert '"wait a moment" → seconds=2.0' in result.output
    assert '"maximum": 60.0' in result.output
    unknown = runner.invoke(root, ["actions", "show", "moonwalk"])
    assert unknown.exit_code == 2
    assert "no action 'moonwalk'" in unknown.output


def test_user_actions_from_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "cli_user_actions.py").write_text(
        textwrap.dedent(
            '''
            def register(registry):
                @registry.action(phrases=("juggle",))
                def juggle(ctx, balls: int = 3) -> bool:
                    """Juggle some balls."""
                    return True
            '''
        )
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    cfg = tmp_path / "anima.yaml"
    cfg.write_text("agent:\n  user_actions: cli_user_actions\n")
    result = runner.invoke(root, ["actions", "list", "--config", str(cfg)])
    assert result.exit_code == 0, result.output
    assert "juggle(balls: int = 3)" in result.output
    bad = tmp_path / "bad.yaml"
    bad.write_text("agent:\n  user_actions: no_such_actions_module\n")
    failed = runner.invoke(root, ["actions", "list", "--config", str(bad)])
    assert failed.exit_code == 2
    assert "cannot import 'no_such_actions_module'" in failed.output
