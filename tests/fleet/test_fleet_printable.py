"""Presence payloads are anyone's to publish (issue 30 item 4): a newline in a name must not
forge a line in the serve log, and an escape sequence (ANSI colours, OSC 52 — a clipboard write)
must not reach the terminal of whoever runs ``anima fleet``."""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Iterator

import pytest
from typer.testing import CliRunner

from anima.cli import app
from anima.frontdoors.mqtt import conflict
from anima.frontdoors.mqtt.frontdoor import MqttFrontDoor
from anima.runtime import Runtime
from anima.testing import eventually
from anima.testing.mosquitto import Mosquitto
from anima.testing.mqtt import MqttProbe
from anima.wire.printable import printable
from anima.wire.topics import Topics

from .conftest import serving

pytestmark = pytest.mark.integration

OSC52 = "\x1b]52;c;ZXZpbA==\x07"  # a clipboard write
FORGED = {"v": 1, "instance": "forger", "name": "x\n2026-12-03 ERROR anima: forged line",
          "host": f"{OSC52}\x1b[31mred\u202e", "pid": 1, "started": "0",
          "body": "\x1b[2J", "driver": "sim\r"}  # fmt: skip


@pytest.fixture
def robot(broker: Mosquitto) -> Iterator[tuple[Runtime, MqttFrontDoor]]:
    with serving(f"p{os.getpid()}", broker) as robot:
        yield robot


def test_printable_escapes_controls_and_bounds_the_length() -> None:
    assert printable("a\nb\x1b[31m\u202ec") == "a\\nb\\x1b[31m\\u202ec"
    assert printable("héllo, wörld ✓") == "héllo, wörld ✓"
    assert printable("x" * 50, 10) == "x" * 10 + "…"


def test_a_forged_identity_forges_no_log_line_and_the_robot_serves_on(
    broker: Mosquitto,
    robot: tuple[Runtime, MqttFrontDoor],
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    runtime, door = robot
    monkeypatch.setattr(conflict, "WARNING_S", 0.3)  # the health's warning lasts 60 s
    caplog.set_level(logging.ERROR, logger="anima.frontdoors.mqtt")
    with MqttProbe(broker.address) as probe:
        probe.publish(Topics(door.config.prefix).identity, json.dumps(FORGED), qos=1)
    assert eventually(lambda: "forger" in door.presence._others, timeout=2)
    lines = [r.getMessage() for r in caplog.records]
    assert any("another anima" in line for line in lines)
    for line in lines:
        assert "\n" not in line
        assert "\x1b" not in line
        assert "\r" not in line
    assert door.connected  # a live identity alone (anyone may publish one) stands no door down
    assert not door.stood_down
    assert any("serves prefix" in w for w in runtime.health.now().warnings)
    assert eventually(  # no new sign of it: the warning goes
        lambda: not any("serves prefix" in w for w in runtime.health.now().warnings), timeout=2
    )


def test_anima_fleet_prints_no_escape_sequence_of_a_retained_identity(
    broker: Mosquitto, robot: tuple[Runtime, MqttFrontDoor]
) -> None:
    evil = f"evil{os.getpid()}"
    with MqttProbe(broker.address) as probe:
        probe.publish(f"{evil}/agent/identity", json.dumps(FORGED), qos=1, retain=True)
        probe.publish(f"{evil}/agent/status", "online", qos=1, retain=True)
        probe.publish(f"{evil}/agent/health", json.dumps({"warnings": [OSC52 + "\nfake row"]}),
                      qos=1, retain=True)  # fmt: skip
    try:
        result = CliRunner().invoke(
            app, ["fleet", "--broker", str(broker.address), "--wait", "0.3"]
        )
        assert result.exit_code == 0, result.output
        assert "\x1b" not in result.output
        assert "\x07" not in result.output
        assert "\r" not in result.output
        rows = result.output.splitlines()
        assert len(rows) == 4  # the header, the robot, the forged one, the broker: no other
        assert "x\\n2026-12-03 ERROR" in result.output
    finally:
        with MqttProbe(broker.address) as probe:
            for leaf in ("identity", "status", "health"):
                probe.publish(f"{evil}/agent/{leaf}", b"", qos=1, retain=True)


def test_a_refused_command_on_a_forged_topic_forges_no_log_line(
    broker: Mosquitto, robot: tuple[Runtime, MqttFrontDoor], caplog: pytest.LogCaptureFixture
) -> None:
    _, door = robot
    caplog.set_level(logging.WARNING, logger="anima.frontdoors.mqtt")
    topics = Topics(door.config.prefix)
    with MqttProbe(broker.address, subscribe=topics.feedback("error")) as probe:
        # Mosquitto refuses C0 controls in a topic; a bidi override (it reverses what follows
        # on the terminal) passes, and so do controls in the payload the reason may quote
        probe.publish(topics.control + "x\u202e)gol", "y", qos=1)
        probe.publish(topics.control + "animation", f"no{OSC52}\nERROR forged", qos=1)
        probe.wait_for(topics.feedback("error"), count=2, timeout=2)
    lines = [r.getMessage() for r in caplog.records if "rejected" in r.getMessage()]
    assert len(lines) == 2
    for line in lines:
        assert line.isprintable(), line
