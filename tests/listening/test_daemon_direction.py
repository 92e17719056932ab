"""The Reachy Mini daemon's direction of arrival as anima reads it (``DaemonDirection``), against
a tiny HTTP server on 127.0.0.1 playing the daemon's ``GET /api/state/doa``: the angle
convention, speech-only hand-on, the robot's own voice, one keep-alive connection, hostile
replies skipped, a lost daemon logged once and found again. (Pollen's own daemon, with a
scripted array: tests/reachy/test_reachy_doa.py.)"""

from __future__ import annotations

import contextlib
import logging
import math
import socket
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from anima.clock import MonotonicClock
from anima.listening.direction.daemon import (
    MAX_BODY,
    PATH,
    DaemonDirection,
    azimuth_of,
    parse_doa,
)
from anima.listening.direction.types import VoiceDirection
from anima.testing import FakeClock, eventually

pytestmark = pytest.mark.integration

LOG = "anima.listening.direction.daemon"


class Server(ThreadingHTTPServer):
    allow_reuse_address = True  # the same port again, for the daemon restarted
    daemon_threads = True


class Daemon:
    """Answers ``GET /api/state/doa`` with ``reply`` (status, body); notes each connection."""

    def __init__(self, port: int = 0) -> None:
        self.reply: tuple[int, bytes] = (200, b"null")
        self.connections: set[int] = set()
        self.sockets: list[socket.socket] = []  # closed with the daemon, as a process's are
        self.requests = 0
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"  # keep-alive, as uvicorn

            def do_GET(self) -> None:
                owner.requests += 1
                if self.client_address[1] not in owner.connections:
                    owner.connections.add(self.client_address[1])
                    owner.sockets.append(self.connection)
                status, body = owner.reply if self.path == PATH else (404, b'{"detail":"?"}')
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: object) -> None:
                pass

        self.server = Server(("127.0.0.1", port), Handler)
        self.port = int(self.server.server_address[1])
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self._thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        for s in self.sockets:
            with contextlib.suppress(OSError):
                s.shutdown(socket.SHUT_RDWR)
        self._thread.join(2)


@pytest.fixture
def daemon() -> Iterator[Daemon]:
    d = Daemon()
    yield d
    d.close()


def reading(angle: float, speech: bool = True) -> tuple[int, bytes]:
    return 200, f'{{"angle": {angle!r}, "speech_detected": {str(speech).lower()}}}'.encode()


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
    "body",
    [
        b"not json", b"\xff\xfe", b"[1, 2]", b'"front"', b"1.5", b"{}", b'{"angle": 1.0}',
        b'{"speech_detected": true}', b'{"angle": NaN, "speech_detected": true}',
        b'{"angle": Infinity, "speech_detected": true}', b'{"angle": "1", "speech_detected": true}',
        b'{"angle": true, "speech_detected": true}', b'{"angle": 1.0, "speech_detected": 1}',
        b'{"angle": null, "speech_detected": true}',
    ],
)  # fmt: skip
def test_what_is_not_a_reading_is_refused(body: bytes) -> None:
    with pytest.raises(ValueError, match=r"not JSON|not an object|not a number|not finite|boolean"):
        parse_doa(body)


def test_a_reading_and_none() -> None:
    assert parse_doa(b"null") is None
    got = parse_doa(b'{"angle": 1, "speech_detected": false, "more": 2}')
    assert got is not None
    assert (got.angle, got.speech) == (1.0, False)


def test_only_speech_is_handed_on_toward_its_azimuth(daemon: Daemon, reader: Reader) -> None:
    clock = FakeClock()
    heard: list[VoiceDirection] = []
    doa = reader(daemon, clock, heard)
    assert doa.poll()  # null: no array, or no reading yet
    assert heard == []
    daemon.reply = reading(math.pi / 2 - 0.5)
    clock.advance(0.1)
    assert doa.poll()
    (voice,) = heard
    assert voice.azimuth == pytest.approx(0.5, abs=1e-9)
    assert voice.t == clock.now()
    assert (voice.elevation, voice.confidence, voice.speech, voice.own_voice) == (
        0.0, 1.0, True, False,
    )  # fmt: skip
    daemon.reply = reading(math.pi / 2 - 0.5, speech=False)
    for _ in range(3):
        assert doa.poll()
    assert len(heard) == 1  # the array heard no speech: nothing to turn to
    assert len(daemon.connections) == 1  # one keep-alive connection for every poll
    assert daemon.requests == 5


def test_the_robots_own_voice_is_marked_so(daemon: Daemon, reader: Reader) -> None:
    clock = FakeClock()
    heard: list[VoiceDirection] = []
    doa = reader(daemon, clock, heard)
    daemon.reply = reading(1.0)
    doa.own_voice.note(clock.now(), playing=True)  # the robot speaks
    doa.poll()
    clock.advance(doa.own_voice.hold_s + 0.01)  # it has been silent long enough
    doa.poll()
    assert [v.own_voice for v in heard] == [True, False]


def test_hostile_replies_are_skipped_and_the_next_reading_still_counts(
    daemon: Daemon, reader: Reader
) -> None:
    clock = FakeClock()
    heard: list[VoiceDirection] = []
    doa = reader(daemon, clock, heard)
    hostile = [
        (200, b"<html>nope</html>"), (200, b"[0.5, true]"),
        (200, b'{"angle": NaN, "speech_detected": true}'), (200, b'{"angle": 0.5}'),
        (500, b'{"angle": 0.5, "speech_detected": true}'),
        (200, b'{"angle": 0.5, "speech_detected": true, "pad": "' + b"x" * 1_000_000 + b'"}'),
        (200, b" " * (MAX_BODY + 1)),
    ]  # fmt: skip
    for reply in hostile:
        daemon.reply = reply
        assert doa.poll()  # the daemon answered, with nothing to use
    assert heard == []
    assert doa.skipped == len(hostile)
    daemon.reply = reading(math.pi / 2)
    assert doa.poll()  # a fresh connection after each body too long to read
    assert [v.azimuth for v in heard] == [0.0]


def test_a_lost_daemon_is_logged_once_and_found_again(
    daemon: Daemon, reader: Reader, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger=LOG)
    clock = FakeClock()
    heard: list[VoiceDirection] = []
    doa = reader(daemon, clock, heard)
    daemon.reply = reading(math.pi / 2 - 0.5)
    assert doa.poll()
    port = daemon.port
    daemon.close()
    for _ in range(5):
        assert not doa.poll()
    down = [r for r in caplog.records if r.name == LOG]
    assert len(down) == 1, down
    assert down[0].levelno == logging.WARNING
    assert f"127.0.0.1:{port}" in down[0].getMessage()
    back = Daemon(port)
    try:
        back.reply = reading(math.pi / 2 + 0.25)
        assert doa.poll()
        assert doa.poll()
    finally:
        back.close()
    logged = [r for r in caplog.records if r.name == LOG]
    assert len(logged) == 2  # and once that it answers again
    assert "answers again" in logged[1].getMessage()
    assert [round(v.azimuth, 9) for v in heard] == [0.5, -0.25, -0.25]


def test_its_thread_polls_at_about_10_hz_and_stops(daemon: Daemon) -> None:
    heard: list[VoiceDirection] = []
    doa = DaemonDirection("127.0.0.1", daemon.port, heard.append, MonotonicClock(spin_s=0.0))
    daemon.reply = reading(math.pi / 2 - 0.3)
    doa.start()
    try:
        assert eventually(lambda: len(heard) >= 5, timeout=3.0)
    finally:
        doa.stop(timeout=2.0)
    polls = daemon.requests
    assert 5 <= polls <= 30  # not as fast as it can: once every PERIOD_S
    threading.Event().wait(0.3)
    assert daemon.requests == polls  # stopped
    assert all(v.azimuth == pytest.approx(0.3) for v in heard)
    assert len(daemon.connections) == 1


def test_its_thread_waits_on_the_injected_clock(daemon: Daemon, reader: Reader) -> None:
    clock = FakeClock()
    t0 = clock.now()
    heard: list[VoiceDirection] = []
    doa = reader(daemon, clock, heard)
    daemon.reply = reading(math.pi / 2)
    doa.start()
    try:
        assert eventually(lambda: daemon.requests == 1, timeout=2.0)
        threading.Event().wait(0.2)
        assert daemon.requests == 1  # fake time stands still: no second poll
        clock.advance(0.1)
        assert eventually(lambda: daemon.requests == 2, timeout=2.0)
    finally:
        doa.stop(timeout=2.0)
    assert [v.t for v in heard] == [t0, t0 + 0.1]
