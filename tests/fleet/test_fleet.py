"""Five robots on one real Mosquitto, and on the embedded broker: ``anima fleet`` lists them
all within 2 s, a command to each reaches only it, ``--all`` reaches every one, a robot killed
shows offline by its last will within the keepalive, and a second robot on a taken prefix is
refused while the first runs on."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator

import pytest
from typer.testing import CliRunner

from anima import commands as cmd
from anima import instances
from anima.cli import app
from anima.errors import ConfigError
from anima.events import MoveStarted
from anima.fleet import send, survey
from anima.frontdoors.mqtt.broker import EmbeddedBroker, free_port
from anima.frontdoors.mqtt.frontdoor import MqttFrontDoor
from anima.runtime import Runtime
from anima.testing import eventually
from anima.testing.events import EventRecorder
from anima.testing.fleet import mqtt_robot
from anima.testing.mosquitto import Mosquitto, find_mosquitto
from anima.testing.serve import ServeProcess
from anima.wire.mqtt import BrokerAddress

pytestmark = pytest.mark.integration

FIVE = 5


def NOD(e: object) -> bool:  # noqa: N802 - a matcher, named as what it matches
    return isinstance(e, MoveStarted) and e.name == "nod"


def robot(prefix: str, address: BrokerAddress) -> tuple[Runtime, MqttFrontDoor]:
    return mqtt_robot(prefix, address, name=f"robot-{prefix}")


class Broker:
    """Mosquitto, or the embedded amqtt broker ``anima serve`` starts when none answers."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        if kind == "mosquitto":
            if find_mosquitto() is None:
                pytest.skip("mosquitto is not installed (Debian: apt-get install mosquitto)")
            self._mosquitto = Mosquitto()
            self._mosquitto.start()
            self.address = self._mosquitto.address
        else:
            self._embedded = EmbeddedBroker(free_port())
            self._embedded.start()
            self.address = self._embedded.address

    def stop(self) -> None:
        if self.kind == "mosquitto":
            self._mosquitto.stop()
        else:
            self._embedded.stop()


@pytest.fixture(scope="module", params=["mosquitto", "embedded"])
def mosquitto(request: pytest.FixtureRequest) -> Iterator[Broker]:
    broker = Broker(request.param)
    try:
        yield broker
    finally:
        broker.stop()


@pytest.fixture(scope="module")
def fleet(mosquitto: Broker) -> Iterator[list[tuple[Runtime, MqttFrontDoor]]]:
    robots = [
        robot(f"f{os.getpid()}r{i}{mosquitto.kind[0]}", mosquitto.address) for i in range(FIVE)
    ]
    for runtime, door in robots:
        runtime.start()
        assert door.wait_connected(10)
    yield robots
    for runtime, _ in robots:
        runtime.stop(ease=False)


def ours(robots: list[tuple[Runtime, MqttFrontDoor]]) -> set[str]:
    return {door.config.prefix for _, door in robots}


def test_the_fleet_lists_all_five_within_2_s(
    mosquitto: Broker, fleet: list[tuple[Runtime, MqttFrontDoor]]
) -> None:
    t0 = time.monotonic()
    found = [r for r in survey(mosquitto.address) if r.prefix in ours(fleet)]
    took = time.monotonic() - t0
    assert took < 2.0
    assert len(found) == FIVE
    for r in found:
        assert r.online
        assert r.name == f"robot-{r.prefix}"
        assert r.identity["body"] == "nadine"
        assert r.identity["driver"] == "sim"
        assert r.state["loop"]["rate_hz"] > 0  # type: ignore[index]
        assert r.health["driver_connected"] is True
        assert r.row()["status"] == "online"
    result = CliRunner().invoke(app, ["fleet", "--broker", str(mosquitto.address)])
    assert result.exit_code == 0, result.output
    assert result.output.splitlines()[0].split()[:3] == ["NAME", "PREFIX", "STATUS"]
    for prefix in ours(fleet):
        assert f"robot-{prefix}" in result.output


def test_a_command_to_each_reaches_only_it(
    mosquitto: Broker, fleet: list[tuple[Runtime, MqttFrontDoor]]
) -> None:
    recorders = [EventRecorder().attach(runtime.events) for runtime, _ in fleet]
    try:
        for i, (_, door) in enumerate(fleet):
            send(mosquitto.address, [door.config.prefix], "animation", "nod")
            assert recorders[i].wait_for(NOD, timeout=5)
            time.sleep(0.2)  # any stray delivery to another robot would be in by now
            for j, rec in enumerate(recorders):
                nods = [e for e in rec.of(MoveStarted) if e.name == "nod"]
                assert len(nods) == (1 if j <= i else 0), (i, j)
    finally:
        for rec in recorders:
            rec.detach()


def test_send_all_through_the_cli_reaches_every_robot(
    mosquitto: Broker, fleet: list[tuple[Runtime, MqttFrontDoor]]
) -> None:
    result = CliRunner().invoke(
        app, ["fleet", "send", "estop", "--all", "--broker", str(mosquitto.address)]
    )
    assert result.exit_code == 0, result.output
    try:
        for runtime, _ in fleet:
            assert eventually(lambda r=runtime: r.state().estop, timeout=5)
    finally:
        for runtime, _ in fleet:
            runtime.execute(cmd.ResetEmergencyStop())
    unknown = CliRunner().invoke(
        app, ["fleet", "send", "estop", "-r", "nobody", "--broker", str(mosquitto.address)]
    )
    assert unknown.exit_code == 2
    assert "no robot nobody" in unknown.output


def test_a_second_robot_on_a_taken_prefix_is_refused(
    mosquitto: Broker, fleet: list[tuple[Runtime, MqttFrontDoor]]
) -> None:
    first, door = fleet[0]
    twin, _ = robot(door.config.prefix, mosquitto.address)
    with pytest.raises(ConfigError, match=r"mqtt\.prefix '.*' is taken .*another anima answers"):
        twin.start()
    assert door.connected  # the first runs on, its session its own
    rec = EventRecorder().attach(first.events)
    try:
        send(mosquitto.address, [door.config.prefix], "animation", "nod")
        assert rec.wait_for(NOD, timeout=5)
    finally:
        rec.detach()


def test_a_robot_killed_shows_offline_by_its_last_will(mosquitto: Broker) -> None:
    prefix = f"f{os.getpid()}killed{mosquitto.kind[0]}"
    server = ServeProcess(
        ["--no-web"],
        env={
            "ANIMA_MQTT__BROKER": str(mosquitto.address),
            "ANIMA_MQTT__PREFIX": prefix,
            "ANIMA_MQTT__KEEPALIVE_S": "5",
            "ANIMA_SPEECH__ENABLED": "false",
        },
    )
    try:
        server.wait_for(r"MQTT connected", timeout=30)
        assert eventually(
            lambda: any(
                r.prefix == prefix and r.online for r in survey(mosquitto.address, wait_s=0.3)
            ),
            timeout=5,
        )
        server.proc.kill()  # no clean stop: only the broker's last will can tell
        t0 = time.monotonic()

        def offline() -> bool:
            found = [r for r in survey(mosquitto.address, wait_s=0.2) if r.prefix == prefix]
            return bool(found) and found[0].status == "offline"

        assert eventually(offline, timeout=15)
        # MQTT's rule: the broker gives up 1.5 keepalives after the last packet (7.5 s); the
        # margin is this test's polling (a survey a try) on a loaded machine
        assert time.monotonic() - t0 < 1.5 * 5 + 3
    finally:
        server.stop()
    assert not instances.pid_file(prefix).exists()  # make test left one per killed server
    assert not instances.state_file(instances.pid_file(prefix)).exists()
