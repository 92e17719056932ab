"""The serial servo driver over a real pty (FakeServoBoard), alone and under the real engine."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
import tty
from collections.abc import Iterator

import numpy as np
import pytest

from anima.body import Body, load_body
from anima.config import BlinkConfig, MotionConfig, SerialDriverConfig
from anima.drivers import Frame, create_driver
from anima.drivers.serial_protocol import encode
from anima.drivers.serial_servo import SerialServoDriver
from anima.errors import DriverError, MissingDependencyError, NotConnectedError
from anima.motion import Goto, Keyframes
from anima.motion.engine import MotionEngine
from anima.testing import eventually
from anima.testing.servo_board import FakeServoBoard

pytestmark = pytest.mark.integration

FAST_RETRY = (0.02, 0.1)  # reconnect backoff for tests: first and longest delay, seconds


def reconnect_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "anima-serial-reconnect"]


@pytest.fixture
def body() -> Body:
    return load_body()


@pytest.fixture
def board(body: Body) -> Iterator[FakeServoBoard]:
    with FakeServoBoard(channels=len(body)) as b:
        yield b


@pytest.fixture
def driver(board: FakeServoBoard) -> Iterator[SerialServoDriver]:
    d = SerialServoDriver(board.port, write_timeout_s=0.01, reconnect_s=FAST_RETRY)
    d.connect()
    yield d
    d.disconnect()


# --- the fake board itself --------------------------------------------------------------------
def test_board_checks_every_packet(board: FakeServoBoard, body: Body) -> None:
    n = len(body)
    good = encode(body.defaults())
    corrupt = bytearray(good)
    corrupt[5] ^= 0x10
    fd = os.open(board.port, os.O_WRONLY | os.O_NOCTTY)
    try:
        os.write(fd, b"\x00\x13garbage" + bytes(corrupt) + encode([1.0] * (n - 1)) + good)
    finally:
        os.close(fd)
    assert board.wait_for(1, timeout=2.0)
    assert board.frames()[0].values == tuple(int(v) for v in body.defaults())
    assert board.bad == 2  # one bad CRC, one wrong channel count


def test_board_link_follows_replug(board: FakeServoBoard) -> None:
    assert os.path.realpath(board.port) == board.device
    board.unplug()
    assert not os.path.lexists(board.port)
    assert not board.plugged
    board.replug()
    assert os.path.realpath(board.port) == board.device


# --- the driver ----------------------------------------------------------------------------------
def test_constructor_touches_nothing() -> None:
    # a fresh interpreter, so pyserial is not already imported by another test
    code = (
        "import sys, threading\n"
        "from anima.body import load_body\n"
        "from anima.config import SerialDriverConfig\n"
        "from anima.drivers import create_driver\n"
        "d = create_driver(SerialDriverConfig(port='/nonexistent/tty'), load_body())\n"
        "assert not d.is_connected\n"
        "assert 'serial' not in sys.modules, 'pyserial imported before connect()'\n"
        "assert threading.active_count() == 1, threading.enumerate()\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=30)


def test_registry_takes_port_and_baud_from_config_then_body(body: Body) -> None:
    d = create_driver(SerialDriverConfig(), body)
    assert isinstance(d, SerialServoDriver)
    assert (d.port, d.baud) == (body.board.port, body.board.baud)
    d = create_driver(SerialDriverConfig(port="/dev/ttyACM3", baud=57600), body)
    assert isinstance(d, SerialServoDriver)
    assert (d.port, d.baud) == ("/dev/ttyACM3", 57600)


def test_connect_to_a_missing_port_names_it(tmp_path: os.PathLike[str]) -> None:
    port = os.path.join(tmp_path, "ttyNOPE")
    d = SerialServoDriver(port)
    with pytest.raises(DriverError, match="ttyNOPE"):
        d.connect()
    assert not d.is_connected
    assert not reconnect_threads()


def test_connect_without_a_port_says_where_to_set_it() -> None:
    with pytest.raises(DriverError, match=r"driver\.port"):
        SerialServoDriver("").connect()


def test_missing_pyserial_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "serial", None)  # makes `import serial` fail
    with pytest.raises(MissingDependencyError, match=r"anima\[serial\]"):
        SerialServoDriver("/dev/ttyUSB0").connect()


def test_send_before_connect_is_an_error() -> None:
    with pytest.raises(NotConnectedError):
        SerialServoDriver("/dev/ttyUSB0").send(Frame(0.0, np.zeros(3)))


def test_send_returns_what_the_board_receives(
    board: FakeServoBoard, driver: SerialServoDriver, body: Body
) -> None:
    values = body.defaults()
    values[:4] = [-3.0, 12.4, 12.6, 300.0]
    sent = driver.send(Frame(1.5, values))
    assert sent.t == 1.5
    assert sent.values[:4].tolist() == [0.0, 12.0, 13.0, 255.0]
    assert board.wait_for(1, timeout=2.0)
    assert board.frames()[0].values == tuple(int(v) for v in sent.values)
    assert board.bad == 0
    assert driver.stats().sent == 1


def test_unplug_and_replug(board: FakeServoBoard, driver: SerialServoDriver, body: Body) -> None:
    frame = Frame(0.0, body.defaults())
    driver.send(frame)
    board.unplug()
    driver.send(frame)  # the write fails with EIO: no exception, the link is marked lost
    assert not driver.is_connected
    assert driver.send(frame).values.tolist() == frame.values.tolist()  # dropped, not queued
    board.replug()
    assert eventually(lambda: driver.is_connected, timeout=3.0, every=0.005)
    before = board.received
    driver.send(frame)
    assert board.wait_for(before + 1, timeout=2.0)
    stats = driver.stats()
    assert (stats.losses, stats.reconnects, stats.dropped) == (1, 1, 2)
    assert board.bad == 0


def test_disconnect_stops_the_reconnect_thread(
    board: FakeServoBoard, driver: SerialServoDriver, body: Body
) -> None:
    board.unplug()
    driver.send(Frame(0.0, body.defaults()))  # lost: the thread is now retrying
    assert reconnect_threads()
    driver.disconnect()
    assert not reconnect_threads()
    assert not driver.is_connected
    with pytest.raises(NotConnectedError):
        driver.send(Frame(0.0, body.defaults()))


def test_a_board_that_stops_reading_costs_frames_not_ticks(body: Body) -> None:
    master, slave = os.openpty()  # nobody reads the master: the pty buffer fills up
    tty.setraw(master)
    tty.setraw(slave)
    d = SerialServoDriver(os.ttyname(slave), write_timeout_s=0.002)
    try:
        d.connect()
        frame = Frame(0.0, body.defaults())
        worst = 0.0
        for _ in range(2000):
            begin = time.monotonic()
            d.send(frame)
            worst = max(worst, time.monotonic() - begin)
            if d.stats().timeouts >= 3:
                break
        stats = d.stats()
        assert stats.timeouts >= 3
        assert stats.dropped == stats.timeouts
        counters = d.link_counters()  # what the health model reads
        assert counters.timeouts == stats.timeouts
        assert "time out" in counters.error
        assert d.is_connected  # slow is not gone
        assert worst < 0.5  # bounded by write_timeout_s, with a loose margin for CI
    finally:
        d.disconnect()
        os.close(master)
        os.close(slave)


def test_engine_survives_unplug_and_replug(body: Body, board: FakeServoBoard) -> None:
    """The real engine at 100 Hz, with an animation, a gaze offset and blinking, over a pty."""
    driver = SerialServoDriver(board.port, baud=body.board.baud, reconnect_s=FAST_RETRY)
    driver.connect()
    config = MotionConfig(blink=BlinkConfig(interval_s=(0.2, 0.4)))  # blink often enough to see
    engine = MotionEngine(body, driver, config=config)  # real MonotonicClock, default idle layers
    arms = ["r_shoulder_pitch", "r_elbow", "l_shoulder_pitch", "l_elbow"]
    t = np.arange(40)[:, None] * 0.03
    wave = 120 + 60 * np.sin(2 * np.pi * t + np.arange(4))
    engine.start()
    try:
        engine.queue_move(Goto(body, {"brows": 180, "torso_yaw": 140}, duration=0.3))
        engine.queue_move(Keyframes(body, arms, wave, frame_period=0.03, name="wave"))
        engine.set_offset("gaze", head=(0, 0.1, 0.3))
        assert board.wait_for(60, timeout=3.0)

        board.unplug()
        assert eventually(lambda: not driver.is_connected, timeout=2.0, every=0.005)
        board.replug()
        assert eventually(lambda: driver.is_connected, timeout=3.0, every=0.005)
        resumed = board.received
        assert board.wait_for(resumed + 30, timeout=2.0)
        assert engine.running
    finally:
        engine.stop()
        driver.disconnect()

    frames = np.array([f.values for f in board.frames()], dtype=np.float64)
    assert frames.shape[1] == len(body)
    assert board.bad == 0
    assert (frames >= body.lower()).all()
    assert (frames <= body.upper()).all()
    eyelids = frames[:, body.index("eyelids")]
    assert eyelids.min() < body.channel("eyelids").default - 30  # a blink reached the board
    last = engine.last_frame
    assert np.array_equal(last, np.rint(last))  # the engine records the frame as sent: bytes
    stats = driver.stats()
    assert stats.losses == 1
    assert stats.reconnects == 1


def test_serial_bench_runs() -> None:
    """A short smoke run of ``anima bench serial``: figures come back; no timing is asserted."""
    from anima.bench.drivers.serial import run_serial_bench

    r = run_serial_bench(0.5)
    assert r.packets > 10
    assert r.bad_packets == 0
    assert r.packets_per_s > 0
    assert r.write_p99_us >= r.write_p50_us > 0
