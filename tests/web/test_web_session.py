"""`anima record` (over the WebSocket, and in-process) and `anima plot`."""

from __future__ import annotations

import itertools
import json
import struct
import threading
from pathlib import Path

import httpx
import pytest
import typer
from typer.testing import CliRunner

from anima.cli import session as session_cli
from anima.frontdoors.web import WebFrontDoor
from anima.runtime import Runtime
from anima.session.plot import read_session
from anima.testing import eventually

pytestmark = pytest.mark.integration

Robot = tuple[Runtime, WebFrontDoor]

app = typer.Typer()  # mounted here as anima.cli mounts it
app.command("record")(session_cli.record_command)
app.command("plot")(session_cli.plot_command)
runner = CliRunner()


def _png_size(path: Path) -> tuple[int, int]:
    head = path.read_bytes()[:24]
    assert head[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", head[16:24])
    return width, height


def test_record_over_the_websocket_then_plot(robot: Robot, tmp_path: Path) -> None:
    _, door = robot
    out = tmp_path / "session.jsonl"

    def drive() -> None:
        # once the recorder's WebSocket is counted, every event reaches it
        eventually(lambda: len(door.clients) == 1)
        with httpx.Client(base_url=door.url) as http:
            http.post("/api/animation", json={"name": "nod"})
            http.post("/api/speak", json={"text": "hello"})

    driver = threading.Thread(target=drive)
    driver.start()
    # 5 s: a 2.5 s recording twice held no nod in a loaded suite (load average 10)
    result = runner.invoke(app, ["record", str(out), "--seconds", "5", "--url", door.url])
    driver.join()
    assert result.exit_code == 0, result.output
    session = read_session(out)
    assert len(session.times) >= 40  # 30/s for 5 s; loose
    assert [a[2] for a in session.animations][:1] == ["nod"]
    assert len(session.speech) == 1
    assert session.speech[0][2] == "hello"
    png = tmp_path / "session.png"
    result = runner.invoke(app, ["plot", str(out), "-o", str(png), "--width", "900"])
    assert result.exit_code == 0, result.output
    assert _png_size(png) == (900, 800)


def test_record_finds_the_dashboard_on_the_configured_port(robot: Robot, tmp_path: Path) -> None:
    """Without --url, `anima record` goes where the config says anima serve is (issue 12)."""
    _, door = robot
    port = door.url.rstrip("/").rsplit(":", 1)[1]
    out = tmp_path / "by-port.jsonl"
    env = {"ANIMA_WEB__PORT": port, "ANIMA_WEB__TOKEN": None}
    result = runner.invoke(app, ["record", str(out), "--seconds", "0.5"], env=env)
    assert result.exit_code == 0, result.output
    assert read_session(out).times


def _frames(path: Path) -> list[dict[str, object]]:
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    return [m for m in lines if m["type"] == "frame"]


@pytest.mark.serial  # the loop's real rate: 36 frames in its second beside three workers
def test_record_over_the_websocket_takes_every_frame_of_the_loop(
    robot: Robot, tmp_path: Path
) -> None:
    """Issue 30 item 7: it recorded the WebSocket's 30 state messages a second, not the loop's
    100 frames: now every commanded frame, each with its engine time."""
    runtime, door = robot
    out = tmp_path / "frames.jsonl"
    result = runner.invoke(app, ["record", str(out), "--seconds", "1.0", "--url", door.url])
    assert result.exit_code == 0, result.output
    frames = _frames(out)
    ts = [float(f["t"]) for f in frames]  # type: ignore[arg-type]
    ticks = [round((b - a) / runtime.engine.period, 3) for a, b in itertools.pairwise(ts)]
    assert len(frames) >= 70  # ~100 in 1 s (30 before); loose for a loaded machine
    # every tick the loop ran, in order, none twice (a tick it skipped, behind, is a gap)
    assert set(ticks) <= {1.0, 2.0, 3.0}, ticks
    assert ticks.count(1.0) >= 0.9 * len(ticks)
    assert f"recorded {len(frames)} frames" in result.output
    session = read_session(out)
    assert len(session.times) == len(frames)  # the plot draws the frames


def test_record_local_and_plot_default_size(tmp_path: Path) -> None:
    out = tmp_path / "local.jsonl"
    env = {"ANIMA_SPEECH__ENABLED": "false", "ANIMA_WEB__ENABLED": "false"}
    result = runner.invoke(app, ["record", str(out), "--seconds", "1", "--local"], env=env)
    assert result.exit_code == 0, result.output
    assert len(read_session(out).times) >= 80  # every frame of the 100 Hz loop (30 before)
    ts = [float(f["t"]) for f in _frames(out)]  # type: ignore[arg-type]
    ticks = [round((b - a) / 0.01, 3) for a, b in itertools.pairwise(ts)]
    assert ticks.count(1.0) >= 0.9 * len(ticks)  # every tick (a skipped one is a gap)
    result = runner.invoke(app, ["plot", str(out)])
    assert result.exit_code == 0, result.output
    assert _png_size(out.with_suffix(".png")) == (1200, 800)


def test_record_without_a_server_fails_in_one_line(tmp_path: Path) -> None:
    from anima.frontdoors.mqtt.broker import free_port

    url = f"http://127.0.0.1:{free_port()}/"
    result = runner.invoke(
        app, ["record", str(tmp_path / "x.jsonl"), "--seconds", "1", "--url", url]
    )
    assert result.exit_code == 2
    assert "cannot reach the dashboard" in result.output


def test_plot_of_a_broken_file_names_the_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"type": "state", "values": []}\n')
    result = runner.invoke(app, ["plot", str(bad)])
    assert result.exit_code == 2
    assert "bad.jsonl:1" in result.output


def test_anima_mounts_record_and_plot() -> None:
    from anima.cli import app as anima

    result = runner.invoke(anima, ["--help"], env={"COLUMNS": "160"})
    assert result.exit_code == 0
    assert " record " in result.output
    assert " plot " in result.output
