"""Under a backlog: an estop never waits (the door's second connection hears only estop), and
a flood of refusals does not pile up QoS 1 messages for the garbage collector.

A gated ``animation`` parser (on paho's thread, as every parser runs) holds the door's own
connection at the first message of a flood, so the rest of it waits behind, for as long as the
test keeps the gate shut; the estop published behind it must still hold the robot at once, and
the order with resets must be the order the messages were sent.
"""

from __future__ import annotations

import dataclasses
import threading
import time
from collections.abc import Iterator

import pytest

from anima import commands as cmd
from anima.config import MqttConfig
from anima.drivers.sim import SimDriver
from anima.frontdoors.mqtt.frontdoor import MqttFrontDoor
from anima.runtime import Runtime
from anima.testing.mqtt import MqttProbe
from anima.wire.mqtt import BrokerAddress
from anima.wire.payloads import control_parsers
from anima.wire.topics import Topics

from .conftest import robot_config, wait_until

pytestmark = pytest.mark.integration

BACKLOG = 300  # messages held behind the gate on the door's connection
HOLD_S = 30.0  # the gate opens by itself after this: a failed test does not hang paho


class HeldDoor:
    """A runtime whose door parses an animation message only while ``gate`` is set (open)."""

    def __init__(self, address: BrokerAddress, prefix: str, *, lane: bool) -> None:
        cfg = robot_config(prefix)
        cfg = dataclasses.replace(cfg, mqtt=MqttConfig(prefix=prefix, estop_lane=lane))
        self.runtime = Runtime(cfg, driver=SimDriver())
        self.gate = threading.Event()
        self.parsed_estopped = 0  # animation messages parsed with the estop already applied

        def held_animation(raw: bytes | str) -> cmd.Command:
            self.gate.wait(HOLD_S)
            if self.runtime.engine.estopped:
                self.parsed_estopped += 1
            return cmd.StopAnimation()

        parsers = {**control_parsers(self.runtime.library), "animation": held_animation}
        self.door = MqttFrontDoor(self.runtime, cfg.mqtt, address, parsers=parsers)
        self.runtime.attach(self.door)
        self.runtime.start()
        assert self.door.wait_connected(5)
        if lane:
            assert self.door.estop_lane is not None
            wait_until(lambda: self.door.estop_lane.connected, 5, "the estop lane subscribed")

    def stop(self) -> None:
        self.gate.set()
        self.runtime.stop(ease=False)


@pytest.fixture
def held_door(mosquitto_address: BrokerAddress, prefix: str) -> Iterator[HeldDoor]:
    door = HeldDoor(mosquitto_address, prefix, lane=True)
    yield door
    door.stop()


@pytest.fixture
def mosquitto_address(request: pytest.FixtureRequest) -> BrokerAddress:
    return request.getfixturevalue("mosquitto").address  # type: ignore[no-any-return]


def _flood(probe: MqttProbe, topics: Topics, count: int = BACKLOG) -> None:
    for n in range(count):
        probe.publish(topics.control + "animation", f"n{n}")


def test_an_estop_behind_a_backlog_holds_the_robot_at_once(
    held_door: HeldDoor, mosquitto_address: BrokerAddress, topics: Topics
) -> None:
    with MqttProbe(mosquitto_address) as probe:
        _flood(probe, topics)
        sent = time.monotonic()
        probe.publish(topics.control + "estop", "", qos=1)
        wait_until(lambda: held_door.runtime.engine.estopped, 2.0, "the estop was applied")
        took = time.monotonic() - sent
        # the door's own connection is still held at the first message of the backlog
        assert held_door.door.received <= 1, (held_door.door.received, took)
        assert held_door.door.estop_lane is not None
        assert held_door.door.estop_lane.heard == 1
        held_door.gate.set()  # let the backlog drain: its own copy of the estop is harmless
        wait_until(lambda: held_door.door.received >= BACKLOG + 1, 10, "the backlog drained")
        assert held_door.runtime.engine.estopped
        assert held_door.parsed_estopped == BACKLOG  # the estop went ahead of all of it


def test_the_end_state_is_the_order_the_messages_were_sent(
    held_door: HeldDoor, mosquitto_address: BrokerAddress, topics: Topics
) -> None:
    """estop, reset → released; estop, reset, estop → stopped (resets come in order)."""
    lane = held_door.door.estop_lane
    assert lane is not None
    with MqttProbe(mosquitto_address, subscribe=topics.feedback("error")) as probe:
        _flood(probe, topics, 50)
        for leaf in ("estop", "reset"):
            probe.publish(topics.control + leaf, "", qos=1)
        wait_until(lambda: held_door.runtime.engine.estopped, 2.0, "the estop was applied")
        held_door.gate.set()
        wait_until(lambda: held_door.door.received >= 52, 10, "the backlog drained")
        wait_until(lambda: not held_door.runtime.engine.estopped, 2.0, "the reset released it")

        held_door.gate.clear()
        _flood(probe, topics, 50)
        for leaf in ("estop", "reset", "estop"):
            probe.publish(topics.control + leaf, "", qos=1)
        held_door.gate.set()
        wait_until(lambda: held_door.door.received >= 52 + 53, 10, "the backlog drained")
        wait_until(lambda: lane.heard == 3, 2, "the lane's copies of the three estops")
        # a barrier: speak (speech is off) is refused when carried out, and the dispatcher
        # carries out every estop and reset that came before it first
        mark = probe.mark()
        probe.publish(topics.control + "speak", "barrier", qos=1)
        refusal = probe.wait_for(
            topics.feedback("error"),
            since=mark,
            where=lambda m: m.json()["topic"] == topics.control + "speak",
        )
        assert refusal.json()["reason"].startswith("speech is not available")
        assert held_door.runtime.engine.estopped


def test_without_the_lane_the_estop_waits_its_turn(
    mosquitto_address: BrokerAddress, prefix: str, topics: Topics
) -> None:
    """What the lane is for: the same backlog holds an estop on the door's connection alone."""
    robot = HeldDoor(mosquitto_address, prefix, lane=False)
    try:
        assert robot.door.estop_lane is None
        with (
            MqttProbe(mosquitto_address) as probe,
            MqttProbe(mosquitto_address, subscribe=topics.control + "estop") as bystander,
        ):
            _flood(probe, topics, 100)
            probe.publish(topics.control + "estop", "", qos=1)
            # the broker has handed the estop to its subscribers: a lane would hold it now
            bystander.wait_for(topics.control + "estop", timeout=5)
            wait_until(lambda: robot.door.received == 1, 5, "the door held at the first message")
            assert not robot.runtime.engine.estopped
            robot.gate.set()
            wait_until(lambda: robot.runtime.engine.estopped, 10, "the estop, in its turn")
            assert robot.parsed_estopped == 0  # every message ahead of it was handled first
    finally:
        robot.stop()


def test_under_a_flood_refusals_go_at_qos0_and_all_still_arrive(
    mosquitto_address: BrokerAddress,
    prefix: str,
    topics: Topics,
) -> None:
    """Past ``acks.limit`` (1000) QoS 1 publishes awaiting their PUBACK, feedback goes at QoS 0
    (paho's tracking of 14,000 of them made every full garbage collection stall the loop)."""
    robot = HeldDoor(mosquitto_address, prefix, lane=True)
    robot.door.acks.limit = 5
    robot.gate.set()
    try:
        with MqttProbe(mosquitto_address, subscribe=topics.feedback("error")) as probe:
            mark = probe.mark()
            for n in range(300):
                probe.publish(topics.control + "look_at", f'{{"x":{n},"y":"a","z":0}}')
            probe.wait_for(topics.feedback("error"), since=mark, timeout=10, count=300)
            acks = robot.door.acks
            assert acks.downgraded > 0  # the burst outran the broker's acknowledgements
            wait_until(lambda: acks.pending() == 0, 5, "every QoS 1 publish acknowledged")
            before = acks.downgraded
            probe.publish(topics.control + "look_at", "{}")  # one more, at ease
            probe.wait_for(topics.feedback("error"), since=mark, timeout=5, count=301)
            assert acks.downgraded == before
    finally:
        robot.stop()
