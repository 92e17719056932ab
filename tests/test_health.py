"""The health model: what moved in the window is a warning that names it, what did not is not;
a channel that does not follow is *likely stalled or loose*; faults are counted; REST serves it."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pytest

from anima.body import load_body
from anima.build import build
from anima.config import AnimaConfig, MqttConfig, SpeechConfig, WebConfig
from anima.drivers.base import Frame, LinkCounters
from anima.drivers.feedback import Feedback
from anima.events import EngineFault
from anima.health import HealthMonitor
from anima.runtime import Runtime
from anima.testing import eventually

pytestmark = pytest.mark.integration


@dataclass
class Board:
    """A driver that counts its link, and can report a reading far from what it was sent."""

    counters: LinkCounters = field(default_factory=LinkCounters)
    connected: bool = True
    off_by: float = 0.0
    sent: int = 0

    @property
    def is_connected(self) -> bool:
        return self.connected

    def connect(self) -> None:
        pass

    def disconnect(self) -> None:
        pass

    def send(self, frame: Frame) -> Frame:
        self.sent += 1
        return frame

    def link_counters(self) -> LinkCounters:
        return self.counters

    def feedback(self) -> Feedback | None:
        values = np.zeros(28)
        return Feedback(0.0, values, None, self.off_by, "r_elbow" if self.off_by else "")


def runtime_with(board: Board) -> Runtime:
    cfg = AnimaConfig(
        mqtt=MqttConfig(enabled=False), web=WebConfig(enabled=False),
        speech=SpeechConfig(enabled=False),
    )  # fmt: skip
    return build(cfg, driver=board, body=load_body())  # type: ignore[arg-type]


def test_a_healthy_robot_is_ok_and_says_what_it_runs() -> None:
    board = Board()
    runtime = runtime_with(board)
    with runtime:
        assert eventually(lambda: board.sent > 5)
        h = runtime.health.now()
        assert h.ok, h.warnings
        assert h.driver == "sim"
        assert h.driver_connected
        assert h.link == LinkCounters()
        assert h.deviation == 0.0
        assert h.speech.startswith("not available")
        assert h.to_json()["warnings"] == []


def test_link_counters_that_moved_are_named_and_fade_out_of_the_window() -> None:
    board = Board()
    runtime = runtime_with(board)
    with runtime:
        monitor = HealthMonitor(runtime, window_s=0.5)
        monitor.now()  # the first sample: nothing moved yet
        board.counters = LinkCounters(timeouts=3, dropped=3, error="writes time out")
        h = monitor.now()
        assert "driver: 3 write timeouts in the last 0.5 s" in h.warnings
        assert "driver: 3 frames dropped in the last 0.5 s" in h.warnings
        assert not h.ok
        monitor._samples[0] = (monitor._samples[0][0] - 2, *monitor._samples[0][1:])  # aged
        assert eventually(lambda: monitor.now().ok, timeout=5)  # out of the window, no warning


def test_a_lost_driver_names_its_error() -> None:
    board = Board()
    runtime = runtime_with(board)
    with runtime:
        assert eventually(lambda: runtime.engine.state().driver_connected)
        board.connected = False
        board.counters = LinkCounters(error="port /dev/ttyUSB0 lost: [Errno 5] I/O error")
        assert eventually(lambda: not runtime.engine.state().driver_connected)
        h = runtime.health.now()
        assert "driver sim not connected: port /dev/ttyUSB0 lost: [Errno 5] I/O error" in h.warnings


def test_a_channel_that_does_not_follow_is_likely_stalled_or_loose() -> None:
    board = Board()
    runtime = runtime_with(board)
    with runtime:
        monitor = HealthMonitor(runtime, stall_s=0.2)
        board.off_by = 9.0
        assert not any("stalled" in w for w in monitor.now().warnings)  # not for long yet
        assert eventually(
            lambda: any(w.startswith("r_elbow likely stalled or loose: 9.0 units") for w in
                        monitor.now().warnings), timeout=5)  # fmt: skip
        board.off_by = 0.5
        assert not any("stalled" in w for w in monitor.now().warnings)


def test_faults_of_the_last_minute_are_counted() -> None:
    board = Board()
    runtime = runtime_with(board)
    with runtime:
        runtime.health.now()
        runtime.events.publish(EngineFault(t=0.0, source="override", reason="a NaN"))
        assert runtime.events.flush(2.0)
        h = runtime.health.now()
        assert h.faults_recent == 1
        assert h.last_fault == "override: a NaN"
        assert "1 faults in the last minute (last: override: a NaN)" in h.warnings


def test_rest_serves_it() -> None:
    import httpx

    from anima.frontdoors.web import WebFrontDoor

    cfg = AnimaConfig(mqtt=MqttConfig(enabled=False), web=WebConfig(port=0),
                      speech=SpeechConfig(enabled=False))  # fmt: skip
    runtime = build(cfg, doors=False)
    door = WebFrontDoor(runtime, cfg.web)
    runtime.attach(door)
    with runtime:
        reply = httpx.get(door.url + "api/health", timeout=5).json()
    assert reply["v"] == 1
    assert reply["ok"] is True
    assert reply["driver"] == "sim"


@pytest.mark.parametrize(("audio_out", "warned"), [(None, True), ("null", False)])
def test_speech_playing_silently_by_default_is_a_warning(
    audio_out: str | None, warned: bool
) -> None:
    """audio_out left to auto found no sound card (the null sink): a warning; null said so."""
    from anima.speech.sinks import NullSink
    from anima.testing.tts import ScriptedEngine

    cfg = AnimaConfig(
        mqtt=MqttConfig(enabled=False), web=WebConfig(enabled=False),
        speech=SpeechConfig(enabled=True, audio_out=audio_out),
    )  # fmt: skip
    runtime = Runtime(cfg, driver=Board(), tts=[ScriptedEngine()], audio_sink=NullSink())
    with runtime:
        h = runtime.health.now()
    silent = [w for w in h.warnings if w.startswith("audio out: no sound card found")]
    assert bool(silent) is warned
    assert h.speech.startswith("engines scripted")
