"""The `anima` command, in-process (typer's runner) and `anima serve` as a real process."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from anima.body import load_body
from anima.cli import app
from anima.drivers.sim import read_recording

pytestmark = pytest.mark.integration

runner = CliRunner()


def test_help_lists_the_commands() -> None:
    result = runner.invoke(app, ["--help"])
    assert result.exit_code == 0
    for command in ("serve", "bench", "body", "config", "version"):
        assert command in result.output


def test_body_show_lists_every_channel() -> None:
    result = runner.invoke(app, ["body", "show"], env={"COLUMNS": "160"})
    assert result.exit_code == 0
    for name in load_body().names:
        assert name in result.output


def test_body_validate_reports_file_and_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.ini"
    bad.write_text("[board]\nchannels = 1\n[channels]\n1 = eyelids 170 40 x\n")
    result = runner.invoke(app, ["body", "validate", str(bad)])
    assert result.exit_code == 2
    assert f"{bad}:4" in result.output
    assert "'x' is not a number" in result.output


def test_body_validate_accepts_the_shipped_body(tmp_path: Path) -> None:
    from anima.body import default_body_path

    result = runner.invoke(app, ["body", "validate", str(default_body_path())])
    assert result.exit_code == 0
    assert "28 channels" in result.output


def test_config_shows_environment_overrides() -> None:
    result = runner.invoke(app, ["config"], env={"ANIMA_MOTION__RATE_HZ": "50"})
    assert result.exit_code == 0
    assert "rate_hz: 50.0" in result.output


def test_config_shows_the_camera_the_body_declares_unless_set() -> None:
    result = runner.invoke(app, ["config"], env={"ANIMA_DRIVER__TYPE": "reachy_mini"})
    assert result.exit_code == 0, result.output
    assert "hfov_deg: 81.4" in result.output  # Reachy Mini's head camera
    assert "mount: head" in result.output
    given = {"ANIMA_DRIVER__TYPE": "reachy_mini", "ANIMA_VISION__HFOV_DEG": "70"}
    result = runner.invoke(app, ["config"], env=given)
    assert "hfov_deg: 70.0" in result.output  # the user's wins
    result = runner.invoke(app, ["config"])
    assert "hfov_deg: 65.0" in result.output  # Nadine declares none: the built-in default


def test_config_rejects_a_bad_key_by_name() -> None:
    result = runner.invoke(app, ["config"], env={"ANIMA_MOTION__RATE": "50"})
    assert result.exit_code == 2
    assert "motion.rate" in result.output


def test_bench_loop_json_reports_the_figures() -> None:
    result = runner.invoke(app, ["bench", "loop", "--seconds", "1", "--json"])
    assert result.exit_code == 0, result.output
    figures = json.loads(result.output)
    for key in ("rate_hz", "period_error_p99_ms", "missed", "tick_compute_p50_us"):
        assert key in figures
    assert figures["ticks"] > 10
    assert figures["frames_sent"] >= figures["ticks"]
    assert figures["moves_played"] >= 1
    assert figures["offset_updates"] >= 1
    assert figures["faults"] == 0


def test_bench_tick_json() -> None:
    result = runner.invoke(app, ["bench", "tick", "--ticks", "300", "--json"])
    assert result.exit_code == 0, result.output
    figures = json.loads(result.output)
    assert figures["ticks"] == 300
    assert 0 < figures["p50_us"] <= figures["p99_us"]


def test_bench_floor_counts_every_wake_up_of_its_real_time_sleeper() -> None:
    # real time is its subject: half a second of 10 ms sleeps, counted, on a thread of its own
    result = runner.invoke(app, ["bench", "floor", "--seconds", "0.5", "--json"])
    assert result.exit_code == 0, result.output
    figures = json.loads(result.output)
    assert figures["wakeups"] == 50
    assert 0 <= figures["missed"] <= figures["late"] <= figures["wakeups"]
    assert 0 <= figures["p99_ms"] <= figures["worst_ms"]
    assert figures["realtime"] == "SCHED_FIFO" or figures["realtime"].startswith("normal")
    refused = runner.invoke(app, ["bench", "floor", "--seconds", "0"])
    assert refused.exit_code != 0
    assert "--seconds" in refused.output


def _serve(tmp_path: Path, *args: str) -> subprocess.Popen[str]:
    env = dict(os.environ, PYTHONUNBUFFERED="1", ANIMA_SERVE__STATUS_INTERVAL_S="0.2")
    env["ANIMA_MQTT__ENABLED"] = "false"  # MQTT has its own tests; keep these off any broker
    env["ANIMA_WEB__ENABLED"] = "false"  # no dashboard: tests would share port 8080
    return subprocess.Popen(
        [sys.executable, "-m", "anima", "serve", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
        text=True,
        env=env,
        cwd=tmp_path,
    )


def _read_until(proc: subprocess.Popen[str], text: str, timeout: float = 60.0) -> list[str]:
    """The lines up to one with ``text``. The bound is generous: under load (CI, a busy
    machine) loading the Piper voice alone has taken 20 s; no test here measures start-up."""
    assert proc.stdout is not None
    lines: list[str] = []
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        line = proc.stdout.readline()
        if not line:
            break
        lines.append(line)
        if text in line:
            return lines
    raise AssertionError(f"{text!r} not seen; output so far:\n{''.join(lines)}")


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_serve_eases_to_rest_on_signal_and_exits_cleanly(tmp_path: Path, sig: int) -> None:
    record = tmp_path / "frames.jsonl"
    proc = _serve(tmp_path, "--record", str(record))
    try:
        _read_until(proc, "anima ready")
        _read_until(proc, "rate ")  # one status line
        proc.send_signal(sig)
        out, _ = proc.communicate(timeout=10)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, out
    assert "eased to rest posture" in out
    frames = read_recording(record)
    assert len(frames) > 20
    body = load_body()
    last = frames[-1].values
    for name, value in body.posture("rest").values.items():
        # the idle layers start taking the channels back in the goto's last tick: tiny offsets
        assert last[body.index(name)] == pytest.approx(value, abs=0.01), name


def test_serve_with_a_broken_config_exits_with_the_reason(tmp_path: Path) -> None:
    cfg = tmp_path / "anima.yaml"
    cfg.write_text("motion:\n  rate_hz: -5\n")
    proc = _serve(tmp_path, "--config", str(cfg))
    out, _ = proc.communicate(timeout=20)
    assert proc.returncode == 2
    assert "motion.rate_hz must be a finite number > 0" in out


def test_serve_drives_the_serial_board_given_by_port(tmp_path: Path) -> None:
    from anima.testing.servo_board import FakeServoBoard

    body = load_body()
    with FakeServoBoard(channels=len(body)) as board:
        proc = _serve(tmp_path, "--driver", "serial", "--port", board.port, "--seconds", "1.5")
        out, _ = proc.communicate(timeout=20)
        assert proc.returncode == 0, out
        assert "anima ready: 28 channels on the serial robot" in out
        assert board.received > 100
        assert board.bad == 0
        frames = board.frames()
    lo, hi = body.lower(), body.upper()
    for f in frames:
        assert (f.values >= lo).all()
        assert (f.values <= hi).all()
