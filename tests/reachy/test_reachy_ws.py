"""The reachy_mini driver over the daemon's WebSocket protocol, against a stand-in daemon on
127.0.0.1 (a real WebSocket server): a nod reaches the daemon as head poses and comes back as
the reported pose, at the daemon's rate; a daemon restarted on its port is relinked."""

from __future__ import annotations

import math
from collections.abc import Iterator

import pytest

from anima import commands as cmd
from anima.build import build
from anima.config import (
    AnimaConfig,
    MqttConfig,
    ReachyMiniDriverConfig,
    SpeechConfig,
    WebConfig,
)
from anima.drivers.reachy_mini import ReachyMiniDriver, euler
from anima.errors import DriverError
from anima.runtime import Runtime
from anima.testing import eventually

from .fake_daemon import FakeDaemon

pytestmark = pytest.mark.integration


def config(port: int) -> AnimaConfig:
    return AnimaConfig(
        driver=ReachyMiniDriverConfig(host="127.0.0.1", port=port, reconnect_s=(0.1, 0.5)),
        mqtt=MqttConfig(enabled=False),
        web=WebConfig(enabled=False),
        speech=SpeechConfig(enabled=False),
    )


@pytest.fixture
def daemon() -> Iterator[FakeDaemon]:
    fake = FakeDaemon()
    try:
        yield fake
    finally:
        fake.stop()


def test_the_body_follows_the_driver(daemon: FakeDaemon) -> None:
    runtime = build(config(daemon.port))
    assert runtime.body.name == "reachy_mini"  # driver.type reachy_mini brings its body


def test_a_nod_reaches_the_daemon_and_comes_back_as_its_reported_pose(daemon: FakeDaemon) -> None:
    runtime: Runtime = build(config(daemon.port))
    with runtime:
        driver = runtime.driver
        assert isinstance(driver, ReachyMiniDriver)
        assert eventually(lambda: len(daemon.targets) > 5, timeout=5)
        runtime.execute(cmd.PlayAnimation(name="nod"))
        pitches: list[float] = []

        def dipped() -> bool:
            m = driver.measured
            if m is not None:
                pitches.append(math.degrees(euler(m.head)[1]))
            return bool(pitches) and max(pitches) > 8

        assert eventually(dipped, timeout=5)  # the nod's 14° down, as the daemon reports it
        assert runtime.state().move == "nod" or max(pitches) > 8
        measured = runtime.state().measured  # the daemon's report, in the body's units
        assert measured is not None
        assert measured.values[runtime.body.index("body_yaw")] == pytest.approx(128, abs=0.5)
    times = [t["at"] for t in daemon.targets]
    span = times[-1] - times[0]
    assert len(times) / span < 60  # about 50 a second, never the loop's 100
    for target in daemon.targets:
        assert len(target["head"]) == 16
        assert len(target["antennas"]) == 2
        assert isinstance(target["body_yaw"], float)


def test_a_daemon_restarted_on_its_port_is_relinked(daemon: FakeDaemon) -> None:
    runtime = build(config(daemon.port))
    port = daemon.port
    with runtime:
        driver = runtime.driver
        assert isinstance(driver, ReachyMiniDriver)
        assert eventually(lambda: len(daemon.targets) > 0, timeout=5)
        daemon.stop()
        assert eventually(lambda: not driver.is_connected, timeout=5)
        again = FakeDaemon(port)
        try:
            assert eventually(lambda: driver.is_connected, timeout=10)
            assert eventually(lambda: len(again.targets) > 0, timeout=5)
            assert driver.reconnects >= 1
            # the runtime's state follows the driver at its next tick (under load, not at once)
            assert eventually(lambda: runtime.state().driver_connected, timeout=5)
        finally:
            again.stop()


def test_no_daemon_is_one_error_naming_it() -> None:
    port = FakeDaemon()
    free = port.port
    port.stop()
    runtime = build(config(free))
    with pytest.raises(
        DriverError, match=rf"no Reachy Mini daemon answers at ws://127.0.0.1:{free}/"
    ):
        runtime.start()
