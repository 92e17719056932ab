"""``anima mcp install`` and ``anima mcp tools``: a desktop client's file gets anima's entry
(its other servers kept, the file replaced whole), and the tools' sizes are printed."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from anima.errors import AnimaError
from anima.frontdoors.mcp.install import config_path, install, server_entry

pytestmark = pytest.mark.integration


def test_the_entry_runs_this_python_on_anima_mcp() -> None:
    entry = server_entry(["--config", "/etc/anima.yaml"])
    assert entry == {
        "command": sys.executable,
        "args": ["-m", "anima", "mcp", "--config", "/etc/anima.yaml"],
    }


def test_install_adds_the_entry_and_keeps_the_rest(tmp_path: Path) -> None:
    path = tmp_path / "claude_desktop_config.json"
    path.write_text(json.dumps({"mcpServers": {"other": {"command": "x"}}, "theme": "dark"}))
    assert install(path, server_entry())
    data = json.loads(path.read_text())
    assert data["theme"] == "dark"
    assert data["mcpServers"]["other"] == {"command": "x"}
    assert data["mcpServers"]["anima"]["args"] == ["-m", "anima", "mcp"]
    assert not install(path, server_entry())  # the same again: unchanged
    assert [p.name for p in tmp_path.iterdir()] == [path.name]  # no temporary file left


def test_install_makes_a_missing_file_and_refuses_a_broken_one(tmp_path: Path) -> None:
    fresh = tmp_path / "a" / "mcp.json"
    assert install(fresh, server_entry())
    assert "anima" in json.loads(fresh.read_text())["mcpServers"]
    broken = tmp_path / "broken.json"
    broken.write_text("{not json")
    with pytest.raises(AnimaError, match="cannot read it as JSON"):
        install(broken, server_entry())
    assert broken.read_text() == "{not json"  # left as it was


def test_each_clients_file(tmp_path: Path) -> None:
    assert config_path("cursor", tmp_path) == tmp_path / ".cursor" / "mcp.json"
    assert config_path("claude", tmp_path).name == "claude_desktop_config.json"
    with pytest.raises(AnimaError, match="unknown client 'vim'"):
        config_path("vim", tmp_path)


def _anima(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "anima", *args],
        check=False,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_the_cli_installs_prints_and_lists(tmp_path: Path) -> None:
    path = tmp_path / "mcp.json"
    done = _anima("mcp", "install", "--client", "cursor", "--path", str(path))
    assert done.returncode == 0, done.stderr
    assert "registered: anima in" in done.stdout
    assert json.loads(path.read_text())["mcpServers"]["anima"]["command"] == sys.executable
    printed = _anima("mcp", "install", "--print", "--url", "http://robot:8080")
    assert json.loads(printed.stdout)["mcpServers"]["anima"]["args"][-2:] == [
        "--url",
        "http://robot:8080",
    ]
    tools = _anima("mcp", "tools")
    assert tools.returncode == 0, tools.stderr
    last = tools.stdout.strip().splitlines()[-1]
    assert last.startswith("9 tools, ")
    assert "characters of JSON" in last


def test_a_users_broken_actions_are_one_error_line_not_a_traceback(tmp_path: Path) -> None:
    import os

    (tmp_path / "broken_actions.py").write_text(
        "def register(registry):\n    raise TypeError('oops')\n", encoding="utf-8"
    )
    cfg = tmp_path / "anima.yaml"
    cfg.write_text(
        "mqtt: {enabled: false}\nweb: {enabled: false}\nspeech: {audio_out: 'null'}\n"
        "agent: {user_actions: broken_actions}\n",
        encoding="utf-8",
    )
    done = subprocess.run(
        [sys.executable, "-m", "anima", "mcp", "--config", str(cfg)],
        check=False,
        capture_output=True,
        text=True,
        timeout=60,
        input="",
        env={**os.environ, "PYTHONPATH": str(tmp_path)},
    )
    assert done.returncode == 2
    assert (
        "error: agent.user_actions: broken_actions.register(registry) failed: TypeError: oops"
        in done.stderr
    )
    assert "Traceback" not in done.stderr
