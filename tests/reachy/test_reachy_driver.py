"""The reachy_mini driver's own logic, on a fake link (the SDK's part is tested against
Pollen's daemon elsewhere): units → the SDK's target, the newest frame at the daemon's rate,
a lost daemon relinked with backoff, the frames clamped to the limits."""

from __future__ import annotations

import math
import threading
import time

import numpy as np
import pytest

from anima.body import load_body
from anima.drivers.base import Frame
from anima.drivers.reachy_mini import Measured, ReachyMiniDriver, Target, euler, pose
from anima.errors import DriverNotConnectedError
from anima.testing import eventually

pytestmark = pytest.mark.integration


class FakeLink:
    """A daemon that notes each target, and can be taken down."""

    def __init__(self, world: FakeWorld) -> None:
        self.world = world

    def set_target(self, target: Target) -> None:
        if self.world.down:
            raise ConnectionError("daemon gone")
        with self.world.lock:
            self.world.targets.append((time.monotonic(), target))

    def read(self) -> Measured | None:
        last = self.world.targets[-1][1] if self.world.targets else None
        return None if last is None else Measured(time.monotonic(), last.head, last.antennas)

    def close(self) -> None:
        self.world.closed += 1


class FakeWorld:
    def __init__(self) -> None:
        self.down = False
        self.links = 0
        self.closed = 0
        self.lock = threading.Lock()
        self.targets: list[tuple[float, Target]] = []

    def link(self) -> FakeLink:
        if self.down:
            raise ConnectionError("connection refused")
        self.links += 1
        return FakeLink(self)


def frame(**channels: float) -> Frame:
    body = load_body("reachy_mini")
    values = np.array([c.default for c in body.channels], dtype=float)
    for name, value in channels.items():
        values[body.index(name)] = value
    return Frame(0.0, values)


def test_the_units_become_the_sdks_pose_antennas_and_body_yaw() -> None:
    driver = ReachyMiniDriver(load_body("reachy_mini"), FakeWorld().link)
    centre = driver.target(frame().values)
    assert np.allclose(centre.head, np.eye(4))
    assert centre.antennas == (0.0, 0.0)
    assert centre.body_yaw == 0.0
    t = driver.target(
        frame(head_z=138, head_yaw=158, head_pitch=118, antenna_left=188, body_yaw=98).values
    )
    assert t.head[2, 3] == pytest.approx(0.010)  # 10 mm up
    roll, pitch, yaw = euler(t.head)
    assert yaw == pytest.approx(math.radians(30))
    assert pitch == pytest.approx(math.radians(-10))  # negative pitch: up
    assert roll == pytest.approx(0.0)
    assert t.antennas == (0.0, pytest.approx(math.radians(60)))
    assert t.body_yaw == pytest.approx(math.radians(-30))


def test_pose_and_euler_are_inverse() -> None:
    for rpy in [(0.1, -0.2, 0.3), (-0.6, 0.5, 2.0), (0.0, 0.0, -3.0)]:
        assert euler(pose((0, 0, 0), rpy)) == pytest.approx(rpy)


def test_it_refuses_another_body_and_a_send_before_connect() -> None:
    with pytest.raises(ValueError, match="needs the Reachy Mini body"):
        ReachyMiniDriver(load_body(), FakeWorld().link)
    driver = ReachyMiniDriver(load_body("reachy_mini"), FakeWorld().link)
    with pytest.raises(DriverNotConnectedError, match="send\\(\\) before connect\\(\\)"):
        driver.send(frame())


def test_frames_are_clamped_to_the_limits_and_returned_as_sent() -> None:
    driver = ReachyMiniDriver(load_body("reachy_mini"), FakeWorld().link)
    driver.connect()
    try:
        sent = driver.send(frame(head_roll=250, head_x=0))
        body = load_body("reachy_mini")
        assert sent.values[body.index("head_roll")] == 168
        assert sent.values[body.index("head_x")] == 108
    finally:
        driver.disconnect()


def test_the_newest_frame_goes_at_the_daemons_rate_not_the_loops() -> None:
    world = FakeWorld()
    driver = ReachyMiniDriver(load_body("reachy_mini"), world.link, rate_hz=50)
    driver.connect()
    try:
        start = time.monotonic()
        n = 0
        while time.monotonic() - start < 1.0:  # the loop's 100 Hz, as fast as it asks
            driver.send(frame(head_yaw=128 + (n % 40)))
            n += 1
            time.sleep(0.01)
        sent = len(world.targets)
    finally:
        driver.disconnect()
    assert n > 60
    assert 10 <= sent <= 60  # about 50: never one per tick
    assert sent < n


def test_a_lost_daemon_is_relinked_with_backoff() -> None:
    world = FakeWorld()
    driver = ReachyMiniDriver(load_body("reachy_mini"), world.link, reconnect_s=(0.05, 0.2))
    driver.connect()
    try:
        driver.send(frame())
        assert eventually(lambda: len(world.targets) >= 1, timeout=5)
        world.down = True
        driver.send(frame(head_yaw=140))
        assert eventually(lambda: not driver.is_connected, timeout=5)
        assert "daemon gone" in driver.error
        dropped = driver.dropped
        driver.send(frame())
        assert driver.dropped == dropped + 1  # dropped, not queued
        world.down = False
        assert eventually(lambda: driver.is_connected, timeout=5)
        assert driver.reconnects == 1
        before = len(world.targets)
        driver.send(frame(head_yaw=150))
        assert eventually(lambda: len(world.targets) > before, timeout=5)
        assert driver.measured is not None
    finally:
        driver.disconnect()
    assert world.closed >= 2  # the lost link, and the last one


def test_the_body_turns_with_the_head_as_the_daemon_keeps_it() -> None:
    """The daemon keeps head yaw − body yaw within 65°, turning the body: send does the same,
    so what it returns is what the robot will do (and the engine ramps from it)."""
    world = FakeWorld()
    driver = ReachyMiniDriver(load_body("reachy_mini"), world.link)
    driver.connect()
    try:
        body = load_body("reachy_mini")
        sent = driver.send(frame(head_yaw=128 + 120, body_yaw=128)).values
        assert sent[body.index("body_yaw")] == pytest.approx(128 + 55)
        sent = driver.send(frame(head_yaw=128 - 30, body_yaw=128 + 120)).values
        assert sent[body.index("body_yaw")] == pytest.approx(128 + 35)
        sent = driver.send(frame(head_yaw=128 + 40, body_yaw=128 - 10)).values
        assert sent[body.index("body_yaw")] == pytest.approx(128 - 10)  # within: untouched
    finally:
        driver.disconnect()


class QuietLink(FakeLink):
    """A daemon that stops reporting (hung) while ``world.quiet``: its last reading gets old."""

    def read(self) -> Measured | None:
        world = self.world
        if getattr(world, "quiet", False):
            return world.last  # type: ignore[attr-defined, no-any-return]
        world.last = super().read()  # type: ignore[attr-defined]
        return world.last  # type: ignore[attr-defined, no-any-return]


def test_a_daemon_that_stops_reporting_is_not_connected_after_stale_s_then_back() -> None:
    world = FakeWorld()
    driver = ReachyMiniDriver(
        load_body("reachy_mini"), lambda: QuietLink(world), rate_hz=100.0, stale_s=0.2
    )
    driver.connect()
    try:
        driver.send(frame())
        assert eventually(lambda: driver.readings >= 1, timeout=2)
        assert driver.is_connected
        world.quiet = True  # type: ignore[attr-defined]
        assert eventually(lambda: not driver.is_connected, timeout=2)
        assert eventually(lambda: "(hung?)" in driver.error, timeout=2)
        assert driver.link_counters().losses == 1
        assert "no reading from the Reachy Mini daemon for" in driver.link_counters().error
        world.quiet = False  # it answers again: read with no frame sent (the engine sends none)
        assert eventually(lambda: driver.is_connected, timeout=2)
        assert driver.link_counters().losses == 1
    finally:
        driver.disconnect()
