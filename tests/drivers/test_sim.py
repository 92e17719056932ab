"""The simulated robot: bounded history, JSON Lines recording on its own thread, strict connect."""

from __future__ import annotations

import dataclasses
import threading
import typing
from pathlib import Path

import numpy as np
import pytest

from anima.body import load_body
from anima.config import DriverConfig, SimDriverConfig
from anima.drivers import DRIVERS, Driver, Frame, SimDriver, create_driver
from anima.drivers.sim import read_recording
from anima.errors import (
    AnimaError,
    ConfigError,
    DriverError,
    DriverNotConnectedError,
    NotConnectedError,
)
from anima.events import EngineFault, Event, EventHub
from anima.motion import Goto
from anima.motion.engine import MotionEngine
from anima.testing import FakeClock

pytestmark = pytest.mark.fast


def _frame(i: int, n: int = 3) -> Frame:
    return Frame(1000.0 + 0.01 * i, np.arange(n, dtype=np.float64) + i)


def test_send_returns_the_frame_and_history_is_bounded() -> None:
    driver = SimDriver(history=5)
    driver.connect()
    assert driver.is_connected
    sent = [driver.send(_frame(i)) for i in range(12)]
    assert sent[3] is not None
    assert sent[3].values.tolist() == [3.0, 4.0, 5.0]
    history = driver.history()
    assert len(history) == 5
    assert [f.t for f in history] == [f.t for f in sent[-5:]]  # the most recent, oldest first
    assert driver.sent == 12
    assert driver.last is sent[-1]
    history.clear()  # a copy: the driver's own history is untouched
    assert len(driver.history()) == 5


def test_send_before_connect_or_after_disconnect_raises() -> None:
    driver = SimDriver()
    assert not driver.is_connected
    assert driver.last is None
    with pytest.raises(NotConnectedError, match="connect"):
        driver.send(_frame(0))
    driver.connect()
    driver.connect()  # idempotent
    driver.send(_frame(0))
    driver.disconnect()
    driver.disconnect()  # idempotent
    with pytest.raises(NotConnectedError):
        driver.send(_frame(1))
    assert driver.sent == 1
    assert issubclass(DriverNotConnectedError, DriverError)  # a driver's error, and
    assert issubclass(DriverNotConnectedError, NotConnectedError)  # one of every link's
    assert issubclass(DriverError, AnimaError)


def test_the_sim_driver_meets_the_protocol() -> None:
    assert isinstance(SimDriver(), Driver)
    with pytest.raises(ValueError, match="history"):
        SimDriver(history=0)


def test_recording_is_written_by_a_writer_thread_and_read_back(tmp_path: Path) -> None:
    path = tmp_path / "rec" / "frames.jsonl"
    driver = SimDriver(record=path, body=load_body())
    assert not path.exists()  # the constructor touches nothing
    driver.connect()
    assert path.exists()
    writers = [t for t in threading.enumerate() if t.name == "anima-sim-record"]
    assert len(writers) == 1
    frames = [_frame(i, n=28) for i in range(250)]
    for f in frames:
        driver.send(f)
    driver.disconnect()  # flushes and joins the writer
    assert not writers[0].is_alive()
    back = read_recording(path)
    assert len(back) == 250
    for got, want in zip(back, frames, strict=True):
        assert got.t == pytest.approx(want.t, abs=1e-6)
        np.testing.assert_array_equal(got.values, want.values)
    lines = path.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 1 + 250  # the hello, then one line per frame


def test_an_engine_recording_matches_what_it_sent(tmp_path: Path) -> None:
    body = load_body()
    path = tmp_path / "run.jsonl"
    driver = SimDriver(record=path, history=1000, body=body)
    driver.connect()
    engine = MotionEngine(body, driver, clock=FakeClock(), idle=())
    engine.queue_move(Goto(body, {"neck_yaw": 180, "r_elbow": 150}, 0.5))
    engine.run(80)
    driver.disconnect()
    back = read_recording(path)
    sent = driver.history()
    assert len(back) == len(sent) == 80
    np.testing.assert_allclose([f.values for f in back], [f.values for f in sent])
    assert back[-1].values[body.index("neck_yaw")] == pytest.approx(180.0)


def test_a_recording_that_cannot_be_opened_fails_on_connect(tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("", encoding="utf-8")
    driver = SimDriver(record=blocker / "frames.jsonl", body=load_body())
    with pytest.raises(DriverError, match="cannot open recording"):
        driver.connect()
    assert not driver.is_connected


def test_a_recording_needs_the_body_it_describes(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="body"):
        SimDriver(record=tmp_path / "x.jsonl")


def test_a_driver_recording_is_a_session_that_plot_reads(tmp_path: Path) -> None:
    """`anima serve --record` and `anima record` write one format (issue 12: plot rejected it)."""
    from anima.session.plot import plot_session, read_session

    body = load_body()
    path = tmp_path / "serve.jsonl"
    driver = SimDriver(record=path, body=body)
    driver.connect()
    engine = MotionEngine(body, driver, clock=FakeClock(), idle=())
    engine.queue_move(Goto(body, {"neck_yaw": 180}, 0.5))
    engine.run(80)
    driver.disconnect()
    session = read_session(path)
    assert [c["name"] for c in session.channels] == [c.name for c in body.channels]
    assert len(session.times) == len(session.values) == 80
    assert session.times[0] == 0.0
    assert session.times[-1] == pytest.approx(79 * 0.01)
    assert session.values[-1][body.index("neck_yaw")] == pytest.approx(180.0)
    png = plot_session(path, tmp_path / "serve.png", width=600, height=400)
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_read_recording_names_the_bad_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text('{"t": 1.0, "values": [1, 2]}\n{"t": 1.01}\n', encoding="utf-8")
    with pytest.raises(DriverError, match=r"bad\.jsonl:2"):
        read_recording(path)


def test_the_registry_builds_the_sim_driver_from_config(tmp_path: Path) -> None:
    body = load_body()
    assert "sim" in DRIVERS.names
    driver = create_driver(SimDriverConfig(history=7), body)
    assert isinstance(driver, SimDriver)
    driver.connect()
    for i in range(10):
        driver.send(_frame(i))
    assert len(driver.history()) == 7
    driver.disconnect()
    with pytest.raises(ConfigError, match="'robot9000'"):
        create_driver(dataclasses.replace(SimDriverConfig(), type="robot9000"), body)  # type: ignore[arg-type]


def test_every_registered_driver_has_its_config_section_and_back() -> None:
    members = typing.get_args(DriverConfig)
    tags = {dataclasses.fields(m)[0].default for m in members}
    assert [dataclasses.fields(m)[0].name for m in members] == ["type"] * len(members)
    assert tags == set(DRIVERS.names)


class _FlakyDriver(SimDriver):
    """A sim robot whose link drops on some sends."""

    def __init__(self, fail_on: set[int]) -> None:
        super().__init__()
        self._fail_on = fail_on
        self.calls = 0

    def send(self, frame: Frame) -> Frame:
        self.calls += 1
        if self.calls in self._fail_on:
            raise DriverError("link dropped")
        return super().send(frame)


def test_the_engine_survives_a_failing_driver() -> None:
    body = load_body()
    hub = EventHub()
    seen: list[Event] = []
    hub.subscribe(seen.append)
    driver = _FlakyDriver(fail_on={3, 4})
    driver.connect()
    engine = MotionEngine(body, driver, clock=FakeClock(), events=hub, idle=())
    engine.run(10)
    hub.drain()
    assert driver.calls == 10
    assert driver.sent == 8
    assert engine.faults == 2
    assert [e.source for e in seen if isinstance(e, EngineFault)] == ["driver", "driver"]
    assert engine.state().driver_connected


def test_the_engine_does_not_send_to_a_disconnected_driver() -> None:
    body = load_body()
    driver = SimDriver()
    engine = MotionEngine(body, driver, clock=FakeClock(), idle=())
    engine.run(5)
    assert driver.sent == 0
    assert engine.faults == 0
    assert not engine.state().driver_connected
    driver.connect()
    engine.run(5)
    assert driver.sent == 5
    assert engine.state().driver_connected
