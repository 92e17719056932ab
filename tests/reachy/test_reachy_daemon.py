"""The reachy_mini driver against Pollen's own daemon: ``reachy-mini-daemon`` 1.13 in its mockup
simulation (``.venv-reachy``, built by ``scripts/reachy-daemon/setup.sh``, which ``make test``
runs), on a free loopback port. A nod sent to anima moves the head pose the daemon itself
reports (its REST state, not anima's reading of it); the daemon restarted is relinked and the
head follows again; the starter animations are followed; commanded and measured agree."""

from __future__ import annotations

import math
import time
from collections.abc import Iterator
from pathlib import Path

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
from anima.drivers.reachy_mini import ReachyMiniDriver
from anima.runtime import Runtime
from anima.testing import eventually
from anima.testing.reachy_daemon import MockupDaemon

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def module_daemon(executable: Path) -> Iterator[MockupDaemon]:
    """One daemon for the module's tests (~6 s of CPU to start each)."""
    with MockupDaemon(executable) as d:
        yield d


@pytest.fixture
def daemon(module_daemon: MockupDaemon) -> MockupDaemon:
    """The module's daemon, running (started again if a test left it stopped)."""
    if module_daemon.process is None or module_daemon.process.poll() is not None:
        module_daemon.start()
    return module_daemon


def runtime_on(daemon: MockupDaemon) -> Runtime:
    return build(
        AnimaConfig(
            driver=ReachyMiniDriverConfig(
                host="127.0.0.1", port=daemon.port, reconnect_s=(0.2, 1.0)
            ),
            mqtt=MqttConfig(enabled=False),
            web=WebConfig(enabled=False),
            speech=SpeechConfig(enabled=False),
        )
    )


def reported(daemon: MockupDaemon) -> dict[str, float]:
    """The head's pose as the daemon reports it (``GET /api/state/full``), degrees and mm."""
    pose = daemon.get("/api/state/full")["head_pose"]
    return {
        **{k: math.degrees(float(pose[k])) for k in ("roll", "pitch", "yaw")},
        **{k: float(pose[k]) * 1000.0 for k in ("x", "y", "z")},
    }


def settled(runtime: Runtime, timeout: float = 10.0) -> None:
    """Wait for the move to end and the robot to catch up with the last frame."""
    assert eventually(lambda: runtime.state().move is None, timeout=timeout)
    time.sleep(0.6)


def sweep(daemon: MockupDaemon, axis: str, seconds: float) -> list[float]:
    values: list[float] = []
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        values.append(reported(daemon)[axis])
        time.sleep(0.03)
    return values


def test_a_nod_sent_to_anima_moves_the_head_the_daemon_reports(daemon: MockupDaemon) -> None:
    runtime = runtime_on(daemon)
    with runtime:
        assert runtime.wait_first_tick()
        settled(runtime)
        before = reported(daemon)["pitch"]
        runtime.execute(cmd.PlayAnimation(name="nod"))
        pitches = sweep(daemon, "pitch", 2.0)
        assert max(pitches) > before + 8  # the nod's 14° down, as the daemon has the head
        settled(runtime)
        measured = runtime.state().measured
        assert measured is not None
        assert measured.lag_ms is not None
        assert 0 < measured.lag_ms < 500
        assert measured.deviation < 4  # at rest again, the head where it was sent


@pytest.mark.serial  # asserts the loop's missed deadlines: 25 of them beside three busy workers
def test_the_daemon_restarted_is_relinked_and_the_head_follows_again(
    daemon: MockupDaemon,
) -> None:
    runtime = runtime_on(daemon)
    with runtime:
        driver = runtime.driver
        assert isinstance(driver, ReachyMiniDriver)
        assert eventually(lambda: driver.sent > 10, timeout=10)
        daemon.restart()  # on the same port: the robot rebooted
        assert eventually(lambda: driver.reconnects >= 1 and driver.is_connected, timeout=20)
        assert eventually(lambda: runtime.state().driver_connected, timeout=5)  # the next tick
        settled(runtime)
        runtime.execute(cmd.PlayAnimation(name="shake"))
        yaws = sweep(daemon, "yaw", 2.5)
        assert max(yaws) > 10
        assert min(yaws) < -10  # side to side, as anima sent it
        assert runtime.engine.stats().missed < 20  # the loop kept its deadlines meanwhile


# one per part of the robot: the head turning with the body, the antennas, the head's roll and
# translation (the bench plays all 8; tests/reachy/test_reachy_safety.py checks every frame)
FOLLOWED = ("look_around", "happy_antennas", "curious")


def test_the_starter_animations_are_followed(daemon: MockupDaemon) -> None:
    runtime = runtime_on(daemon)
    with runtime:
        driver = runtime.driver
        assert isinstance(driver, ReachyMiniDriver)
        assert set(FOLLOWED) <= set(runtime.library.gestures())
        off: dict[str, float] = {}
        for name in FOLLOWED:
            runtime.execute(cmd.PlayAnimation(name=name))
            settled(runtime)
            fb = driver.feedback()
            assert fb is not None
            off[name] = fb.deviation
        assert max(off.values()) < 4, off  # each ends where it was sent (units: ° or mm)
        assert driver.dropped == 0
