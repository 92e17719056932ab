"""Pollen's own daemon, for the tests that drive it: skipped, saying why, where it is not
installed, and a failure under CI (where make test's bootstrap builds it)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from anima.testing.reachy_daemon import MockupDaemon, find_daemon


@pytest.fixture(scope="session")
def executable() -> Path:
    exe = find_daemon()
    if exe is None:
        why = "Pollen's daemon is not installed: scripts/reachy-daemon/setup.sh builds .venv-reachy"
        if os.environ.get("CI"):
            pytest.fail(f"{why} (make test runs it; it failed or was skipped)")
        pytest.skip(why)
    return exe


@pytest.fixture
def daemon(executable: Path) -> Iterator[MockupDaemon]:
    with MockupDaemon(executable) as d:
        yield d
