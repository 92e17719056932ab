"""The pid and state files of ``anima serve`` (issue 30 items 6 and 10): the state records the
broker, a clean stop removes both, and those of an instance killed before it could are removed
by the next claim (``make test`` left them in the temp folder every run)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from anima import instances

pytestmark = pytest.mark.integration


def test_claim_records_the_broker_sweeps_the_dead_and_release_removes_both(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path))
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    dead = instances.pid_file("killed")
    dead.write_text(str(gone.pid))
    instances.state_file(dead).write_text(json.dumps({"pid": gone.pid, "broker": "h:1"}))
    mine = instances.claim("mine", broker="127.0.0.1:1884")
    assert mine is not None
    assert not dead.exists()
    assert not instances.state_file(dead).exists()
    state = json.loads(instances.state_file(mine).read_text())
    assert state == {"pid": os.getpid(), "prefix": "mine", "broker": "127.0.0.1:1884"}
    instances.release(mine)
    assert list(tmp_path.iterdir()) == []


def test_forget_removes_only_the_files_of_that_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path))
    for prefix, pid in (("a", 111111), ("b", 222222)):
        instances.pid_file(prefix).write_text(str(pid))
        instances.state_file(instances.pid_file(prefix)).write_text("{}")
    instances.forget(111111)
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        f"anima-{os.getuid()}-b.json",
        f"anima-{os.getuid()}-b.pid",
    ]
