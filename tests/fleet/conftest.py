"""The fleet tests' broker (Debian's Mosquitto, one per module) and a robot serving on it."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from anima.frontdoors.mqtt.frontdoor import MqttFrontDoor
from anima.runtime import Runtime
from anima.testing.fleet import mqtt_robot
from anima.testing.mosquitto import Mosquitto, find_mosquitto


@pytest.fixture(scope="module")
def broker() -> Iterator[Mosquitto]:
    if find_mosquitto() is None:
        pytest.skip("mosquitto is not installed (Debian: apt-get install mosquitto)")
    with Mosquitto() as b:
        yield b


@contextmanager
def serving(prefix: str, broker: Mosquitto) -> Iterator[tuple[Runtime, MqttFrontDoor]]:
    """A robot on ``prefix``, connected to ``broker`` until the block ends."""
    runtime, door = mqtt_robot(prefix, broker.address)
    runtime.start()
    assert door.wait_connected(10)
    try:
        yield runtime, door
    finally:
        runtime.stop(ease=False)
