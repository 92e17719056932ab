"""A hung Reachy daemon (SIGSTOP: its socket stays open, it answers nothing) is seen within about
a second — driver not connected, the health's warning — and linked again when it resumes
(issue 30: with the daemon stopped 8 s, ``driver_connected`` stayed true)."""

from __future__ import annotations

import os
import signal
import time

import pytest

from anima.build import build
from anima.config import AnimaConfig, MqttConfig, ReachyMiniDriverConfig, SpeechConfig, WebConfig
from anima.drivers.reachy_mini import ReachyMiniDriver
from anima.testing import eventually
from anima.testing.reachy_daemon import MockupDaemon

pytestmark = pytest.mark.integration


def test_a_hung_daemon_shows_as_not_connected_in_the_health_and_comes_back(
    daemon: MockupDaemon,
) -> None:
    runtime = build(
        AnimaConfig(
            driver=ReachyMiniDriverConfig(host="127.0.0.1", port=daemon.port),
            mqtt=MqttConfig(enabled=False),
            web=WebConfig(enabled=False),
            speech=SpeechConfig(enabled=False),
        )
    )
    with runtime:
        driver = runtime.driver
        assert isinstance(driver, ReachyMiniDriver)
        assert eventually(lambda: driver.readings > 10, timeout=10)
        health = runtime.health
        assert daemon.process is not None
        group = daemon.process.pid
        os.killpg(group, signal.SIGSTOP)
        try:
            stopped = time.monotonic()
            assert eventually(lambda: not runtime.state().driver_connected, timeout=3)
            seen_after = time.monotonic() - stopped
            assert not driver.is_connected
            assert "(hung?)" in driver.link_counters().error
            assert eventually(lambda: "(hung?)" in driver.error, timeout=1)  # and its log line
            now = health.now()
            assert not now.driver_connected
            assert any("not connected: no reading from" in w for w in now.warnings), now
        finally:
            os.killpg(group, signal.SIGCONT)
        assert seen_after < 2.0  # stale_s (1 s) and a tick or two, not the 8 s it was unseen
        assert eventually(lambda: runtime.state().driver_connected, timeout=5)
        assert driver.stalls == 1
