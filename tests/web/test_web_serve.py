"""`anima serve` serves the dashboard and prints its URL (on a free port here, not 8080)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from anima.frontdoors.mqtt.broker import free_port

pytestmark = pytest.mark.integration


def test_serve_prints_the_url_and_serves_the_page(tmp_path: Path) -> None:
    port = free_port()
    env = dict(os.environ, PYTHONUNBUFFERED="1", ANIMA_MQTT__ENABLED="false")
    env["ANIMA_WEB__PORT"] = str(port)
    # the with block closes the output pipe and waits for the process, on every path
    with subprocess.Popen(
        [sys.executable, "-m", "anima", "serve"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
        text=True,
        env=env,
        cwd=tmp_path,
    ) as proc:
        assert proc.stdout is not None
        try:
            url = ""
            end = time.monotonic() + 20
            while time.monotonic() < end and not url:
                line = proc.stdout.readline()
                assert line, "serve ended early"
                if line.startswith("anima dashboard: "):
                    url = line.split(": ", 1)[1].strip()
            assert url == f"http://127.0.0.1:{port}/"
            with httpx.Client(base_url=url) as http:
                assert "<svg" in http.get("/").text
                assert http.post("/api/animation", json={"name": "nod"}).status_code == 202
            proc.send_signal(signal.SIGTERM)
            out, _ = proc.communicate(timeout=10)
        finally:
            if proc.poll() is None:
                proc.kill()
    assert proc.returncode == 0, out
