"""The MQTT front door on real brokers: the embedded amqtt one always, and Debian's Mosquitto.

Each test gets its own topic prefix, so the brokers are shared by the session; a test that
restarts a broker starts its own. The probe subscribes before the runtime starts, so it sees
everything the door publishes, in order.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Callable, Iterator
from typing import Protocol

import pytest

from anima.config import AnimaConfig, BehaviourConfig, MqttConfig, SpeechConfig
from anima.drivers.sim import SimDriver
from anima.frontdoors.mqtt.broker import EmbeddedBroker, free_port
from anima.frontdoors.mqtt.frontdoor import MqttFrontDoor
from anima.runtime import Runtime
from anima.testing import FakeClock, eventually
from anima.testing.mosquitto import Mosquitto, find_mosquitto
from anima.testing.mqtt import MqttProbe
from anima.wire.mqtt import BrokerAddress
from anima.wire.topics import Topics

BROKERS = ("embedded", "mosquitto")
NO_MOSQUITTO = "mosquitto is not installed (Debian: apt-get install mosquitto)"

_prefixes = itertools.count(1)


def wait_until(predicate: Callable[[], bool], timeout: float, what: str) -> None:
    """Fail the test, saying ``what`` was awaited, unless ``predicate`` holds within ``timeout``."""
    if not eventually(predicate, timeout, every=0.005):
        pytest.fail(f"not within {timeout} s: {what}")


def robot_config(prefix: str) -> AnimaConfig:
    """A runtime config for these tests: its own prefix, no periodic full blink, no speech."""
    return AnimaConfig(
        mqtt=MqttConfig(prefix=prefix),
        # the periodic full blink is an animation: its animation_done would interleave
        behaviour=BehaviourConfig(full_blink_every_s=600.0),
        # the contract without a speech service: speak is answered on the error topic
        speech=SpeechConfig(enabled=False),
    )


@pytest.fixture(scope="session")
def embedded_broker() -> Iterator[EmbeddedBroker]:
    broker = EmbeddedBroker(free_port())
    broker.start()
    yield broker
    broker.stop()


@pytest.fixture(scope="session")
def mosquitto() -> Iterator[Mosquitto]:
    if find_mosquitto() is None:
        pytest.skip(NO_MOSQUITTO)
    with Mosquitto() as broker:
        yield broker


@pytest.fixture(params=BROKERS)
def broker(request: pytest.FixtureRequest) -> BrokerAddress:
    """The address of each broker in turn."""
    if request.param == "embedded":
        embedded: EmbeddedBroker = request.getfixturevalue("embedded_broker")
        return embedded.address
    mosq: Mosquitto = request.getfixturevalue("mosquitto")
    return mosq.address


@pytest.fixture
def prefix() -> str:
    return f"t{os.getpid()}n{next(_prefixes)}"


@pytest.fixture
def topics(prefix: str) -> Topics:
    return Topics(prefix)


@pytest.fixture
def probe(broker: BrokerAddress, prefix: str) -> Iterator[MqttProbe]:
    """A client subscribed to everything under ``<prefix>/agent/``."""
    with MqttProbe(broker, subscribe=f"{prefix}/agent/#") as p:
        yield p


class RobotFactory(Protocol):
    def __call__(
        self, prefix: str, address: BrokerAddress, *, autojump: bool = False
    ) -> tuple[Runtime, MqttFrontDoor]: ...


@pytest.fixture
def make_robot() -> Iterator[RobotFactory]:
    """Start runtimes on the sim driver behind a connected MQTT door; all stopped at teardown.
    ``autojump``: the runtime runs on autojump fake time (its moves end as soon as its threads
    have done their work; the door and the broker stay on real time)."""
    started: list[tuple[Runtime, FakeClock | None]] = []

    def make(
        prefix: str, address: BrokerAddress, *, autojump: bool = False
    ) -> tuple[Runtime, MqttFrontDoor]:
        cfg = robot_config(prefix)
        clock = FakeClock(autojump=True) if autojump else None
        # on fake time the loop runs ahead while the test waits on the broker: a long history
        driver = SimDriver(history=100_000 if autojump else 1000)
        runtime = Runtime(cfg, driver=driver, clock=clock)
        door = MqttFrontDoor(runtime, cfg.mqtt, address)
        runtime.attach(door)
        runtime.start()
        started.append((runtime, clock))
        assert door.wait_connected(5), f"the door did not connect to {address}"
        assert runtime.wait_first_tick()
        return runtime, door

    yield make
    for runtime, clock in reversed(started):
        runtime.stop(ease=False)
        if clock is not None:
            clock.close()


@pytest.fixture
def autojump() -> bool:
    """Whether ``robot`` runs on autojump fake time: a test whose wait is the length of a move
    opts in with ``@pytest.mark.parametrize("autojump", [True], ids=["autojump"])``."""
    return False


@pytest.fixture
def robot(
    make_robot: RobotFactory, broker: BrokerAddress, prefix: str, probe: MqttProbe, autojump: bool
) -> tuple[Runtime, MqttFrontDoor]:
    """One robot on ``prefix``, started after the probe subscribed."""
    return make_robot(prefix, broker, autojump=autojump)


@pytest.fixture
def runtime(robot: tuple[Runtime, MqttFrontDoor]) -> Runtime:
    return robot[0]


@pytest.fixture
def door(robot: tuple[Runtime, MqttFrontDoor]) -> MqttFrontDoor:
    return robot[1]


@pytest.fixture
def sim(runtime: Runtime) -> SimDriver:
    assert isinstance(runtime.driver, SimDriver)
    return runtime.driver


@pytest.fixture
def send(probe: MqttProbe, topics: Topics) -> Callable[[str, bytes | str], None]:
    """Publish on ``<prefix>/agent/control/<leaf>`` (QoS 1: acknowledged by the broker)."""

    def publish(leaf: str, payload: bytes | str) -> None:
        probe.publish(topics.control + leaf, payload, qos=1)

    return publish
