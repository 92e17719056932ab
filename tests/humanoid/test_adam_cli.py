"""`anima adam` driven through a pipe, and `anima humanoid serve` as a real process.

The commands are run through a small typer app holding exactly what ``anima.cli`` registers
(``humanoid.app`` as ``humanoid``, ``humanoid.adam`` as ``adam``), in a child process with real
stdin/stdout pipes.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from anima.frontdoors.mqtt.broker import free_port
from anima.humanoid.server import AdamServer

pytestmark = pytest.mark.integration

ANIMA = (
    "import typer; from anima.cli import humanoid; app = typer.Typer(); "
    "app.add_typer(humanoid.app, name='humanoid'); app.command('adam')(humanoid.adam); app()"
)
ENV = {**os.environ, "PYTHONUNBUFFERED": "1", "COLUMNS": "160"}


def anima(*args: str) -> list[str]:
    return [sys.executable, "-c", ANIMA, *args]


@pytest.fixture
def live() -> Iterator[AdamServer]:
    """A simulated Adam on the real clock (the child process cannot share a fake one)."""
    with AdamServer(port=0) as server:
        yield server


SESSION = """\
help
state
list
mode start
mode Zero
wait Start 5
posture 0.5 0 0 0
posture a b
speed nan 0 0
speed 0.1 0 0 --fast
motion Greeting
carry 7
dynamic maybe
control warp
fly
# a comment, then a blank line

mode Stop
clear
quit
state
"""


def test_adam_through_a_pipe(live: AdamServer) -> None:
    done = subprocess.run(
        anima("adam", "--ip", "127.0.0.1", "--port", str(live.port)),
        input=SESSION,
        capture_output=True,
        text=True,
        timeout=30,
        env=ENV,
        check=False,
    )
    out = done.stdout
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in out + done.stderr
    expected = [
        "mode MODE",  # help
        "fsm         Stop  (drives off: SetMode Start)",  # state
        "modes now   Start, Stop",
        "motions   Greeting, Chest Expansion, Stretching, Gentleman's Salute",  # list
        "entering Start (1 s)",  # the name's case does not matter
        "not allowed: SetMode('Zero') is not allowed now: mode_enable_list is ['Stop']",
        "in Start",  # wait
        "error: stand_pitch=0.5 is out of range [-0.1, 0.1] rad",
        "error: expected 4 numbers (P R Y H), got 2",
        "error: x_speed is not finite (nan)",
        "error: unknown option '--fast': only --continuous",
        "not allowed: SetStandMotion('Greeting') is not allowed now: motion_enable_list is []",
        "error: carry box must be 0 (put down), 1 (squat to carry) or 2 (stand to carry)",
        "error: expected on or off, got 'maybe'",
        "error: control mode must be traditional (0) or rl (1), got 'warp'",
        "unknown command 'fly': type help for the list",
        "emergency stop: drives off; SetErrorClear before Start",
        "drive errors cleared",
    ]
    position = 0
    for line in expected:  # in this order
        found = out.find(line, position)
        assert found >= 0, f"{line!r} missing after position {position} in:\n{out}"
        position = found + len(line)
    assert out.count("fsm ") == 1  # nothing ran after quit
    assert live.adam.state().fsm_name == "Stop"


def test_adam_explains_an_unreachable_robot_in_one_line() -> None:
    port = free_port()
    done = subprocess.run(
        anima("adam", "--port", str(port), "--connect-timeout", "0.3"),
        input="",
        capture_output=True,
        text=True,
        timeout=30,
        env=ENV,
        check=False,
    )
    assert done.returncode == 2
    assert done.stderr.strip() == (
        f"error: cannot reach Adam at 127.0.0.1:{port} within 0.3 s "
        "(is the robot control program running? check ip_config.json)"
    )


def test_humanoid_serve_answers_health_checks_and_stops_on_sigterm() -> None:
    proc = subprocess.Popen(
        anima("humanoid", "serve", "--port", "0"),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=ENV,
    )
    watchdog = threading.Timer(20.0, proc.kill)  # bounds the blocking readline below
    watchdog.start()
    try:
        assert proc.stdout is not None
        first = proc.stdout.readline()  # printed once serving
        match = re.search(r"on 127\.0\.0\.1:(\d+) ", first)
        assert match, first
        with grpc.insecure_channel(f"127.0.0.1:{match[1]}") as channel:
            health = health_pb2_grpc.HealthStub(channel)
            answer = health.Check(
                health_pb2.HealthCheckRequest(service="adam_control.RobotControl"), timeout=5.0
            )
            assert answer.status == health_pb2.HealthCheckResponse.SERVING
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=10)
        assert proc.returncode == 0, err
        assert "simulated Adam stopped" in out
    finally:
        watchdog.cancel()
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=5)


def test_humanoid_serve_on_a_taken_port_fails_in_one_line(live: AdamServer) -> None:
    done = subprocess.run(
        anima("humanoid", "serve", "--port", str(live.port)),
        capture_output=True,
        text=True,
        timeout=30,
        env=ENV,
        check=False,
    )
    assert done.returncode == 2
    assert done.stderr.startswith(f"error: cannot listen on 127.0.0.1:{live.port}")
    assert "Traceback" not in done.stderr
