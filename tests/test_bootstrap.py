"""The two commands' set-up: `make run` installs only what running needs (issue 12 item 14)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[1]


def _packages(name: str) -> set[str]:
    lines = (ROOT / "scripts" / name).read_text().splitlines()
    return {line.split()[0] for line in lines if line.strip() and not line.startswith("#")}


def test_running_needs_no_browser_and_testing_adds_them() -> None:
    run, test = _packages("apt-run.txt"), _packages("apt-test.txt")
    assert {"mosquitto", "libespeak-ng1", "libportaudio2"} <= run
    assert not {"chromium", "firefox-esr"} & run
    assert {"chromium", "firefox-esr"} <= test


def test_make_run_bootstraps_for_running_and_make_test_for_testing() -> None:
    makefile = (ROOT / "Makefile").read_text()
    targets = dict(re.findall(r"^([\w-]+):[ \t]*([^\n]*)$", makefile, re.MULTILINE))
    assert targets["run"] == "bootstrap-run"
    assert targets["test"] == "bootstrap"
    assert "scripts/bootstrap.sh run\n" in makefile
    assert "scripts/bootstrap.sh test\n" in makefile


def test_bootstrap_refuses_an_unknown_purpose() -> None:
    done = subprocess.run(
        ["bash", str(ROOT / "scripts" / "bootstrap.sh"), "deploy"],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert done.returncode == 2
    assert "usage: scripts/bootstrap.sh run|test" in done.stderr
