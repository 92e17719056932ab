"""The Reachy Mini daemon's direction of arrival as anima reads it (``DaemonDirection``), against
a tiny WebSocket server on 127.0.0.1 playing the daemon's state stream (``/api/state/ws/full``
with ``doa``): the angle convention, speech-only hand-on, the robot's own voice, one
connection, hostile messages skipped, a lost daemon logged once and found again. (Pollen's own
daemon, with a scripted array: tests/reachy/test_reachy_doa.py.)"""

from __future__ import annotations

import json
import logging
import math
import queue
import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from websockets.exceptions import ConnectionClosed
from websockets.protocol import State
from websockets.sync.server import Server, ServerConnection, serve

from anima.clock import MonotonicClock
from anima.listening.direction.daemon import (
    MAX_MESSAGE,
    PATH,
    DaemonDirection,
    azimuth_of,
    parse_doa,
)
from anima.listening.direction.types import VoiceDirection
from anima.testing import FakeClock, eventually

pytestmark = pytest.mark.integration

LOG = "anima.listening.direction.daemon"


class Daemon:
    """Streams what a test puts in ``send`` (one message each), or, with ``every_s``, repeats
    ``reply`` at that period as the daemon does; notes each connection's request path, and how
    many are open (a connection anima closed leaves the queue to the next one)."""

    def __init__(self, port: int = 0, every_s: float | None = None) -> None:
        self.send: queue.Queue[str | bytes] = queue.Queue()
        self.reply: str | bytes = state(None)
        self.every_s = every_s
        self.paths: list[str] = []
        self.sent = 0
        self.open = 0
        self._stop = threading.Event()
        self.server: Server = serve(self._serve, "127.0.0.1", port, max_size=2**22)
        self.port = int(self.server.socket.getsockname()[1])
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self._thread.start()

    def _serve(self, ws: ServerConnection) -> None:
        assert ws.request is not None
        self.paths.append(ws.request.path)
        self.open += 1
        try:
            while not self._stop.is_set() and ws.state is State.OPEN:
                if self.every_s is not None:
                    ws.send(self.reply)
                    self.sent += 1
                    self._stop.wait(self.every_s)
                    continue
                try:
                    message = self.send.get(timeout=0.05)
                except queue.Empty:
                    continue
                ws.send(message)
                self.sent += 1
        except ConnectionClosed:
            pass
        finally:
            self.open -= 1

    def close(self) -> None:
        self._stop.set()
        self.server.shutdown()
        self._thread.join(2)


def state(doa: dict[str, Any] | None) -> str:
    """One message of the stream as the daemon sends it (its other fields asked off)."""
    return json.dumps(
        {"control_mode": "enabled", "head_pose": None, "body_yaw": None,
         "antennas_position": None, "timestamp": "2026-12-04T09:34:16.448604Z", "doa": doa}
    )  # fmt: skip


def reading(angle: float, speech: bool = True) -> str:
    return state({"angle": angle, "speech_detected": speech})


@pytest.fixture
def daemon() -> Iterator[Daemon]:
    d = Daemon()
    yield d
    d.close()


Reader = Callable[[Daemon, FakeClock, list[VoiceDirection]], DaemonDirection]


@pytest.fixture
def reader() -> Iterator[Reader]:
    """A DaemonDirection hearing into a list; its connection closed at the end."""
    made: list[DaemonDirection] = []

    def make(d: Daemon, clock: FakeClock, heard: list[VoiceDirection]) -> DaemonDirection:
        made.append(DaemonDirection("127.0.0.1", d.port, heard.append, clock, timeout_s=1.0))
        return made[-1]

    yield make
    for doa in made:
        doa.close()


def test_the_daemons_angle_becomes_anima_s_azimuth() -> None:
    assert azimuth_of(math.pi / 2) == 0.0  # front
    assert azimuth_of(0.0) == pytest.approx(math.pi / 2)  # the robot's left
    assert azimuth_of(math.pi) == pytest.approx(-math.pi / 2)  # its right
    assert azimuth_of(math.pi / 2 - 0.5) == pytest.approx(0.5)
    assert azimuth_of(-math.pi / 2) == math.pi  # behind: π, never −π
    assert azimuth_of(3 * math.pi / 2) == math.pi
    assert azimuth_of(2 * math.pi) == pytest.approx(math.pi / 2)  # a whole turn more: left
    for k in range(-40, 41):
        assert -math.pi < azimuth_of(k * 0.2) <= math.pi


@pytest.mark.parametrize(
    "message",
    [
        b"not json", b"\xff\xfe", b"[1, 2]", b'"front"', b"1.5", b"null", b'{"timestamp": 1}',
        *(
            b'{"doa": ' + doa + b"}"
            for doa in (
                b"[1, 2]", b'"front"', b"1.5", b"{}", b'{"angle": 1.0}',
                b'{"speech_detected": true}', b'{"angle": NaN, "speech_detected": true}',
                b'{"angle": Infinity, "speech_detected": true}',
                b'{"angle": "1", "speech_detected": true}',
                b'{"angle": true, "speech_detected": true}',
                b'{"angle": 1.0, "speech_detected": 1}',
                b'{"angle": null, "speech_detected": true}',
            )
        ),
    ],
)  # fmt: skip
def test_what_is_not_a_reading_is_refused(message: bytes) -> None:
    with pytest.raises(
        ValueError, match=r"not JSON|not an object|not a number|not finite|boolean|no doa"
    ):
        parse_doa(message)


def test_a_reading_and_none() -> None:
    assert parse_doa(state(None)) is None  # no array, or no reading yet
    got = parse_doa(b'{"doa": {"angle": 1, "speech_detected": false, "more": 2}, "imu": null}')
    assert got is not None
    assert (got.angle, got.speech) == (1.0, False)


def test_only_speech_is_handed_on_toward_its_azimuth(daemon: Daemon, reader: Reader) -> None:
    clock = FakeClock()
    heard: list[VoiceDirection] = []
    doa = reader(daemon, clock, heard)
    daemon.send.put(state(None))
    assert doa.read()  # null: no array, or no reading yet
    assert heard == []
    daemon.send.put(reading(math.pi / 2 - 0.5))
    clock.advance(0.1)
    assert doa.read()
    (voice,) = heard
    assert voice.azimuth == pytest.approx(0.5, abs=1e-9)
    assert voice.t == clock.now()
    assert (voice.elevation, voice.confidence, voice.speech, voice.own_voice) == (
        0.0, 1.0, True, False,
    )  # fmt: skip
    for _ in range(3):
        daemon.send.put(reading(math.pi / 2 - 0.5, speech=False))
        assert doa.read()
    assert len(heard) == 1  # the array heard no speech: nothing to turn to
    assert doa.connections == 1  # one connection for every message
    (path,) = daemon.paths
    assert path.startswith(PATH + "?")
    for asked in ("frequency=10", "with_doa=true", "with_head_pose=false"):
        assert asked in path


def test_the_robots_own_voice_is_marked_so(daemon: Daemon, reader: Reader) -> None:
    clock = FakeClock()
    heard: list[VoiceDirection] = []
    doa = reader(daemon, clock, heard)
    doa.own_voice.note(clock.now(), playing=True)  # the robot speaks
    daemon.send.put(reading(1.0))
    doa.read()
    clock.advance(doa.own_voice.hold_s + 0.01)  # it has been silent long enough
    daemon.send.put(reading(1.0))
    doa.read()
    assert [v.own_voice for v in heard] == [True, False]


def test_hostile_messages_are_skipped_and_the_next_reading_still_counts(
    daemon: Daemon, reader: Reader
) -> None:
    clock = FakeClock()
    heard: list[VoiceDirection] = []
    doa = reader(daemon, clock, heard)
    hostile: list[str | bytes] = [
        "<html>nope</html>", "[0.5, true]", b"\x00\xff binary",
        '{"doa": {"angle": NaN, "speech_detected": true}}', '{"doa": {"angle": 0.5}}',
        '{"timestamp": "no doa"}',
        '{"doa": {"angle": 0.5, "speech_detected": true}, "pad": "' + "x" * 1_000_000 + '"}',
        " " * (MAX_MESSAGE + 1),
    ]  # fmt: skip
    for message in hostile:
        daemon.send.put(message)
        assert doa.read()  # the daemon answered, with nothing to use
        if len(message) > MAX_MESSAGE:  # refused: that connection is over before the next
            assert eventually(lambda: daemon.open == 0, timeout=2.0)
    assert heard == []
    assert doa.skipped == len(hostile)
    assert doa.connections == 2  # the first too-long message ended the connection; made anew
    daemon.send.put(reading(math.pi / 2))
    assert doa.read()  # and again after the second
    assert [v.azimuth for v in heard] == [0.0]
    assert doa.connections == 3


def test_a_lost_daemon_is_logged_once_and_found_again(
    daemon: Daemon, reader: Reader, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger=LOG)
    clock = FakeClock()
    heard: list[VoiceDirection] = []
    doa = reader(daemon, clock, heard)
    daemon.send.put(reading(math.pi / 2 - 0.5))
    assert doa.read()
    port = daemon.port
    daemon.close()
    for _ in range(3):
        assert not doa.read()
    down = [r for r in caplog.records if r.name == LOG]
    assert len(down) == 1, down
    assert down[0].levelno == logging.WARNING
    assert f"127.0.0.1:{port}" in down[0].getMessage()
    back = Daemon(port)
    try:
        back.send.put(reading(math.pi / 2 + 0.25))
        back.send.put(reading(math.pi / 2 + 0.25))
        assert doa.read()
        assert doa.read()
    finally:
        back.close()
    logged = [r for r in caplog.records if r.name == LOG]
    assert len(logged) == 2  # and once that it answers again
    assert "answers again" in logged[1].getMessage()
    assert [round(v.azimuth, 9) for v in heard] == [0.5, -0.25, -0.25]


def test_a_daemon_that_goes_quiet_is_lost_after_timeout_s(daemon: Daemon) -> None:
    heard: list[VoiceDirection] = []
    doa = DaemonDirection("127.0.0.1", daemon.port, heard.append, FakeClock(), timeout_s=0.2)
    try:
        daemon.send.put(reading(1.0))
        assert doa.read()
        assert not doa.read()  # connected, and nothing within 0.2 s
        assert eventually(lambda: daemon.open == 0, timeout=2.0)  # it closed that connection
        daemon.send.put(reading(1.0))
        assert doa.read()  # a new connection
        assert doa.connections == 2
    finally:
        doa.close()


def test_its_thread_reads_the_stream_at_its_pace_and_stops_at_once() -> None:
    daemon = Daemon(every_s=0.1)  # as the daemon streams at frequency=10
    heard: list[VoiceDirection] = []
    doa = DaemonDirection("127.0.0.1", daemon.port, heard.append, MonotonicClock(spin_s=0.0))
    try:
        daemon.reply = reading(math.pi / 2 - 0.3)
        doa.start()
        try:
            assert eventually(lambda: len(heard) >= 3, timeout=3.0)
        finally:
            stopped = threading.Event()
            threading.Thread(target=lambda: (doa.stop(timeout=2.0), stopped.set())).start()
            assert stopped.wait(0.9)  # not a whole message timeout (1 s): the wait is ended
        assert all(v.azimuth == pytest.approx(0.3) for v in heard)
        assert doa.connections == 1
        assert doa.handed == len(heard)
    finally:
        daemon.close()


def test_a_missing_daemon_is_retried_on_the_injected_clock(reader: Reader) -> None:
    daemon = Daemon()
    port = daemon.port
    daemon.close()  # nothing listens there now
    clock = FakeClock()
    heard: list[VoiceDirection] = []
    doa = DaemonDirection("127.0.0.1", port, heard.append, clock, retry_s=0.5, timeout_s=0.5)
    doa.start()
    back: Daemon | None = None
    try:
        assert eventually(lambda: doa._down, timeout=2.0)  # tried once: refused
        back = Daemon(port, every_s=0.05)
        back.reply = reading(math.pi / 2)
        threading.Event().wait(0.3)
        assert heard == []  # fake time stands still: no second try yet
        clock.advance(0.5)
        assert eventually(lambda: len(heard) >= 1, timeout=2.0)
    finally:
        doa.stop(timeout=2.0)
        if back is not None:
            back.close()
