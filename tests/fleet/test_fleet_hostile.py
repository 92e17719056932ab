"""Anyone on the broker may publish on a robot's presence topics and retain garbage for
``anima fleet`` to read: a ping flood gets a bounded number of pongs, odd identities are logged
once, and neither the robot nor the fleet view stops answering."""

from __future__ import annotations

import json
import logging
import os
import time
from collections.abc import Iterator

import pytest

from anima.events import MoveStarted
from anima.fleet import FleetWatcher, send, survey
from anima.frontdoors.mqtt.frontdoor import MqttFrontDoor
from anima.frontdoors.mqtt.presence import PONGS_PER_S
from anima.runtime import Runtime
from anima.testing.events import EventRecorder
from anima.testing.mosquitto import Mosquitto
from anima.testing.mqtt import MqttProbe
from anima.wire.topics import Topics

from .conftest import serving

pytestmark = pytest.mark.integration


@pytest.fixture
def robot(broker: Mosquitto) -> Iterator[tuple[Runtime, MqttFrontDoor]]:
    with serving(f"h{os.getpid()}", broker) as robot:
        yield robot


def test_a_ping_flood_gets_bounded_pongs_and_odd_identities_are_logged_once(
    broker: Mosquitto, robot: tuple[Runtime, MqttFrontDoor], caplog: pytest.LogCaptureFixture
) -> None:
    runtime, door = robot
    topics = Topics(door.config.prefix)
    caplog.set_level(logging.ERROR, logger="anima.frontdoors.mqtt.presence")
    with MqttProbe(broker.address, subscribe=topics.pong) as probe:
        t0 = time.monotonic()
        for i in range(500):  # a burst, bounded
            probe.publish(topics.ping, json.dumps({"nonce": f"n{i}"}))
        for bad in (b"", b"not json", b"[" * 20000, b"x" * 100_000, b'{"nonce": 5}'):
            probe.publish(topics.ping, bad)
        for _ in range(20):  # the same stranger again and again
            probe.publish(
                topics.identity,
                json.dumps(
                    {"instance": "stranger", "name": "x", "host": "h", "pid": 1, "started": "s"}
                ),
            )
        for bad in (b"[" * 20000, b"x" * 100_000, b"{}", b"null"):
            probe.publish(topics.identity, bad)
        time.sleep(1.0)
        took = time.monotonic() - t0
        pongs = len(probe.messages(topics.pong))
    assert pongs <= took * PONGS_PER_S + 2  # not one per ping
    strangers = [r for r in caplog.records if "another anima" in r.getMessage()]
    assert len(strangers) == 1
    rec = EventRecorder().attach(runtime.events)
    try:  # the robot still hears and obeys
        send(broker.address, [door.config.prefix], "animation", "nod")
        assert rec.wait_for(lambda e: isinstance(e, MoveStarted) and e.name == "nod", timeout=5)
    finally:
        rec.detach()
    assert door.connected


def test_the_fleet_view_reads_past_garbage(
    broker: Mosquitto, robot: tuple[Runtime, MqttFrontDoor]
) -> None:
    _, door = robot
    junk = f"junk{os.getpid()}"
    with MqttProbe(broker.address) as probe:
        for leaf, payload in (
            ("status", b"\xff" * 50), ("identity", b"[" * 20000),
            ("state", json.dumps({"loop": "fast", "speaking": [1]}).encode()),
            ("health", json.dumps({"warnings": "many", "ok": "yes"}).encode()),
        ):  # fmt: skip
            probe.publish(f"{junk}/agent/{leaf}", payload, qos=1, retain=True)
        probe.publish(f"{junk}2/agent/state", b"x" * 300_000, qos=1, retain=True)
    try:
        robots = {r.prefix: r for r in survey(broker.address)}
        assert robots[door.config.prefix].online  # the real robot, as ever
        row = robots[junk].row()  # the junk one, shown for what it is
        assert row["loop"] == "–"
        assert row["health"] == "–"  # not online: its retained parts are not shown as live
        assert not robots[junk].online
        assert f"{junk}2" not in robots or robots[f"{junk}2"].state == {}
    finally:
        with MqttProbe(broker.address) as probe:  # clear the retained junk
            for leaf in ("status", "identity", "state", "health"):
                probe.publish(f"{junk}/agent/{leaf}", b"", qos=1, retain=True)
            probe.publish(f"{junk}2/agent/state", b"", qos=1, retain=True)


def test_the_fleet_view_waits_a_little_for_an_online_robots_missing_parts(
    broker: Mosquitto,
) -> None:
    """A broker under load may hand out a robot's health after the first second: the view waits
    for it (bounded), and a robot that never sends one is listed anyway."""
    part = f"part{os.getpid()}"
    with MqttProbe(broker.address) as probe:
        probe.publish(f"{part}/agent/status", b"online", qos=1, retain=True)
        probe.publish(f"{part}/agent/identity", b'{"name": "p"}', qos=1, retain=True)
        probe.publish(f"{part}/agent/state", b'{"speaking": false}', qos=1, retain=True)
    watcher = FleetWatcher(broker.address).start()
    try:
        assert watcher.wait_until(  # its retained parts arrived (under load: after a while)
            lambda robots: any(r.prefix == part and r.online and r.state for r in robots), 10.0
        )
        t0 = time.monotonic()
        assert not watcher.wait_complete(0.3)  # its health never came
        assert time.monotonic() - t0 >= 0.3
        with MqttProbe(broker.address) as probe:
            probe.publish(f"{part}/agent/health", b'{"ok": true}', qos=1)
        assert watcher.wait_complete(5.0)
        seen = {r.prefix: r for r in watcher.robots()}[part]
        assert seen.health == {"ok": True}
        assert seen.row()["health"] == "ok"
    finally:
        watcher.stop()
        with MqttProbe(broker.address) as probe:
            for leaf in ("status", "identity", "state"):
                probe.publish(f"{part}/agent/{leaf}", b"", qos=1, retain=True)
