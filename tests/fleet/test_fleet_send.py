"""``anima fleet send`` tells a refusal from a success, holds a command for a robot that is not
online, and ``anima fleet`` finds the broker a running ``anima serve`` uses (issue 30 items 2,
5, 6)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator

import pytest
from typer.testing import CliRunner

from anima import instances
from anima.cli import app
from anima.fleet import deliver
from anima.frontdoors.mqtt.frontdoor import MqttFrontDoor
from anima.runtime import Runtime
from anima.testing.mosquitto import Mosquitto
from anima.testing.mqtt import MqttProbe

from .conftest import serving

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def robot(broker: Mosquitto) -> Iterator[tuple[Runtime, MqttFrontDoor]]:
    with serving(f"s{os.getpid()}", broker) as robot:
        yield robot


def fleet(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, ["fleet", *args])
    return result.exit_code, result.output


def test_a_refused_command_exits_1_with_the_robot_s_reason(
    broker: Mosquitto, robot: tuple[Runtime, MqttFrontDoor]
) -> None:
    prefix = robot[1].config.prefix
    at = ["--broker", str(broker.address), "-r", prefix]
    code, out = fleet("send", "animation", "no_such_move", *at)
    assert code == 1, out
    assert f"refused by {prefix}:" in out
    assert "no_such_move" in out
    assert "sent animation" not in out
    code, out = fleet("send", "animation", "nod", *at, "--wait", "0.3")
    assert code == 0, out
    assert f"sent animation to {prefix}/agent/control/animation" in out


def test_a_command_is_held_until_the_robot_is_online_and_reported_when_it_never_is(
    broker: Mosquitto,
) -> None:
    prefix = f"held{os.getpid()}"
    control = f"{prefix}/agent/control/animation"
    with MqttProbe(broker.address, subscribe=control) as probe:
        probe.publish(f"{prefix}/agent/status", "offline", qos=1, retain=True)
        try:
            never = deliver(broker.address, [prefix], "animation", "nod", online_s=0.2,
                            refusal_s=0.0)  # fmt: skip
            assert not never[0].sent
            assert "did not say online within 0.2 s (its status: offline)" in str(never[0].refused)
            assert probe.messages(control) == []  # nothing a session-less broker could drop

            def back() -> None:  # the robot's door, back after its broker restarted
                time.sleep(0.3)
                probe.publish(f"{prefix}/agent/status", "online", qos=1, retain=True)

            threading.Thread(target=back).start()
            t0 = time.monotonic()
            held = deliver(broker.address, [prefix], "animation", "nod", online_s=3.0,
                           refusal_s=0.0)  # fmt: skip
            assert held[0].sent
            assert held[0].refused is None
            assert time.monotonic() - t0 >= 0.25
            assert probe.wait_for(control, timeout=2).payload == b"nod"
        finally:
            probe.publish(f"{prefix}/agent/status", b"", qos=1, retain=True)


def test_anima_fleet_finds_the_broker_of_a_running_anima_serve(
    broker: Mosquitto,
    robot: tuple[Runtime, MqttFrontDoor],
    tmp_path: os.PathLike[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path))
    monkeypatch.delenv("ANIMA_MQTT__BROKER", raising=False)
    # a process that looks like `anima serve` to /proc, serving on a port other than 1883
    stand_in = subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(30)", "anima", "serve"]
    )
    try:
        path = instances.pid_file("lab")
        path.write_text(str(stand_in.pid))
        state = {"pid": stand_in.pid, "prefix": "lab", "broker": str(broker.address)}
        instances.state_file(path).write_text(json.dumps(state))
        code, out = fleet("--wait", "0.3")
        assert code == 0, out
        assert robot[1].config.prefix in out
        assert f"broker {broker.address} (the broker of anima serve 'lab' (pid " in out
    finally:
        stand_in.kill()
        stand_in.wait()
    code, out = fleet("--wait", "0.1", "--broker", str(broker.address))
    assert f"broker {broker.address} (--broker)" in out
