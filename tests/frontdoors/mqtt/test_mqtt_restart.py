"""Restarting a robot against a broker that stays up (issue 30 items 1 and 7).

A cleanly stopped run leaves nothing that looks alive: its retained identity says it stopped,
and a start-up that finds another instance's identity counts it live only when it was just
published or its instance answers a ping. A clean stop logs no warning and takes well under
``serve.shutdown_s``.
"""

from __future__ import annotations

import json
import logging
import time

import pytest

from anima.config import MqttConfig
from anima.drivers.sim import SimDriver
from anima.frontdoors.mqtt import conflict
from anima.frontdoors.mqtt.conflict import PrefixConflict
from anima.frontdoors.mqtt.frontdoor import MqttFrontDoor
from anima.runtime import Runtime
from anima.testing import FakeClock
from anima.testing.mosquitto import Mosquitto
from anima.testing.mqtt import MqttProbe
from anima.wire.mqtt import BrokerAddress
from anima.wire.topics import Topics

from .conftest import robot_config, wait_until
from .proxy import LinkProxy

pytestmark = pytest.mark.integration


def start(prefix: str, mosquitto: Mosquitto) -> tuple[Runtime, MqttFrontDoor]:
    return start_at(prefix, mosquitto.address)


def start_at(prefix: str, address: BrokerAddress) -> tuple[Runtime, MqttFrontDoor]:
    cfg = robot_config(prefix)
    runtime = Runtime(cfg, driver=SimDriver())
    door = MqttFrontDoor(runtime, cfg.mqtt, address)
    runtime.attach(door)
    runtime.start()
    assert door.wait_connected(5)
    return runtime, door


def other_anima(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if "another anima" in r.getMessage()]


def test_restarts_against_a_kept_broker_log_no_error_and_stop_without_warning(
    mosquitto: Mosquitto, prefix: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="anima")
    topics = Topics(prefix)
    for _ in range(3):
        runtime, _door = start(prefix, mosquitto)
        time.sleep(0.05)  # the retained identity came back to the door's subscription
        began = time.monotonic()
        runtime.stop(ease=False)
        took = time.monotonic() - began
        assert took < 1.0, f"a clean stop took {took:.2f} s"
    assert other_anima(caplog) == []
    warnings = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert warnings == []
    with MqttProbe(mosquitto.address, subscribe=f"{prefix}/agent/#") as probe:
        status = probe.wait_for(topics.status, timeout=2)
        identity = probe.wait_for(topics.identity, timeout=2).json()
    assert status.payload == b"offline"
    assert identity["stopped"]  # the retained identity says the run ended


def test_a_retained_identity_of_a_killed_run_answers_no_ping_and_is_not_an_error(
    mosquitto: Mosquitto, prefix: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="anima")
    topics = Topics(prefix)
    dead = {"v": 1, "name": prefix, "instance": "deadbeef00000000", "host": "vm", "pid": 1,
            "started": "2026-01-01T00:00:00+00:00"}  # fmt: skip
    with MqttProbe(mosquitto.address) as probe:
        probe.publish(topics.identity, json.dumps(dead), qos=1, retain=True)
        probe.publish(topics.status, "offline", qos=1, retain=True)
    runtime, door = start(prefix, mosquitto)
    try:
        wait_until(lambda: door.presence.pings_sent >= 1, 2, "the door pinged the identity")
        time.sleep(0.3)  # no pong comes from a dead run
        assert other_anima(caplog) == []
    finally:
        runtime.stop(ease=False)


def test_two_robots_on_one_prefix_that_the_claim_missed_the_newer_stands_down(
    prefix: str, caplog: pytest.LogCaptureFixture
) -> None:
    # A's link is cut and the broker restarted, B starts (the claim finds A dead), A returns:
    # the same client id, so each connection takes the session from the other
    caplog.set_level(logging.INFO, logger="anima")
    topics = Topics(prefix)
    with Mosquitto() as broker, LinkProxy(broker.address) as proxy:
        old = start_at(prefix, proxy.address)
        new: tuple[Runtime, MqttFrontDoor] | None = None
        try:
            proxy.cut()
            broker.restart()
            new = start_at(prefix, broker.address)
            proxy.restore()
            (a, door_a), (b, door_b) = old, new
            wait_until(lambda: bool(door_b.stood_down), 6, "the newer robot stood down")
            assert any("not serving MQTT" in w for w in b.health.now().warnings)
            wait_until(lambda: door_a.connected, 4, "the older robot serving again")
            with MqttProbe(broker.address) as probe:
                probe.publish(topics.control + "estop", "", qos=1)
            wait_until(lambda: a.engine.state().estopped, 2, "the estop reached the older")
            assert not door_a.stood_down
        finally:
            for runtime, _door in filter(None, (new, old)):
                runtime.stop(ease=False)


def test_a_stop_with_the_broker_gone_is_quick(prefix: str) -> None:
    # both paho loops (the door's and its estop lane's) may sleep in their reconnect wait, up
    # to 1 s each: ended side by side (one stop took 2.8 s against serve.shutdown_s 1.5)
    with Mosquitto() as broker:
        runtime, door = start_at(prefix, broker.address)
        broker.halt()
        wait_until(lambda: not door.connected, 2, "the door saw the broker go")
        time.sleep(0.5)  # into the reconnect backoff (0.25, 0.5, 1 s…)
        began = time.monotonic()
        runtime.stop(ease=False)
        took = time.monotonic() - began
    assert took < 1.1, f"the stop took {took:.2f} s"


def test_the_conflict_rules_on_a_fake_clock() -> None:
    clock = FakeClock()
    problems: dict[str, str] = {}
    rules = PrefixConflict(MqttConfig(prefix="lab"), BrokerAddress("h", 1), problems, clock.now)
    other = json.dumps({"name": "x", "host": "h\n", "pid": 2, "started": "s"}).encode()
    rules.found(other, newer=True, taking_session=False)  # a live identity alone
    assert not rules.due
    assert "serves prefix 'lab' too" in problems["mqtt"]
    assert "\n" not in problems["mqtt"]
    clock.advance(conflict.WARNING_S + 0.1)
    rules.tick()
    assert problems == {}  # no new sign of it: the warning went
    rules.found(other, newer=False, taking_session=True)  # the older of two keeps serving
    assert not rules.due
    rules.found(other, newer=True, taking_session=True)  # the newer stands down
    assert rules.due
    assert rules.stood().startswith("not serving MQTT: another anima (x on h\\n, pid 2")
    assert not rules.due
    clock.advance(conflict.WARNING_S + 0.1)
    rules.tick()
    assert problems["mqtt"] == rules.stood_down  # for good
