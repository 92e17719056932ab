"""Hostile requests against the REST door on real uvicorn (127.0.0.1): huge bodies, declared or
streamed, and hostile values in every JSON field. Each gets a 4xx with a specific reason, memory
stays flat, and the door answers afterwards.

Before issue 12: a 100 MB body was read whole before the 64 KiB check (+160 MB per request),
a 400-digit integer in /api/look_at, /api/humanoid/posture or /api/humanoid/speed answered 500,
and /api/speak spoke a BOM-prefixed JSON body as text and accepted NUL, lone surrogates and the
locale "en-US\\n"."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterable, Iterator
from typing import Any

import httpx
import pytest

from anima.events import Event, SpeechStarted
from anima.frontdoors.web import WebFrontDoor
from anima.runtime import Runtime
from anima.testing import eventually
from anima.wire.payloads import MAX_PAYLOAD

pytestmark = pytest.mark.integration

Robot = tuple[Runtime, WebFrontDoor]
BIG = "1" + "2" * 399  # 400 digits: float() of it as an int overflows
HUNDRED_MB = 100_000_000
CHUNK = b"x" * 1_000_000  # one buffer sent again and again: the client allocates nothing more
JSON = {"content-type": "application/json"}  # commands are JSON only (issue 30)
GROWTH_LIMIT = 8 * 1024 * 1024  # bytes of peak RSS growth allowed: the body is 100 MB


def peak_rss_reset() -> None:
    """Reset this process's peak RSS (VmHWM): the server runs in it, on uvicorn's thread."""
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")


def peak_rss() -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    raise AssertionError("no VmHWM in /proc/self/status")


def raw_post(door: WebFrontDoor, head: str, body: Iterable[bytes] = ()) -> bytes:
    """Send ``head`` then ``body`` on a raw socket while reading the answer on another thread;
    the server may stop reading (and reset the connection) at any point of the body."""
    sock = socket.create_connection(("127.0.0.1", door.port), timeout=10.0)
    answer = bytearray()

    def read() -> None:
        try:
            while data := sock.recv(65536):
                answer.extend(data)
        except OSError:  # reset after the answer: what was read is kept
            pass

    reader = threading.Thread(target=read, name="raw-post-reader")
    reader.start()
    try:
        sock.sendall(head.encode("latin-1"))
        for piece in body:
            if answer:  # answered already: a client would stop here too
                break
            sock.sendall(piece)
    except OSError:  # the server closed the connection mid-body: expected once it refused
        pass
    reader.join(15.0)
    sock.close()
    assert not reader.is_alive(), "no answer within 15 s"
    return bytes(answer)


def status_and_body(answer: bytes) -> tuple[int, str]:
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 "), answer[:200]
    return int(head.split()[1]), body.decode("utf-8", "replace")


def head(path: str, *headers: str) -> str:
    lines = [f"POST {path} HTTP/1.1", "Host: 127.0.0.1", "Content-Type: application/json"]
    return "\r\n".join([*lines, *headers]) + "\r\n\r\n"


def hundred_mb(chunked: bool) -> Iterator[bytes]:
    for _ in range(HUNDRED_MB // len(CHUNK)):
        if chunked:
            yield b"%x\r\n" % len(CHUNK)
            yield CHUNK
            yield b"\r\n"
        else:
            yield CHUNK
    if chunked:
        yield b"0\r\n\r\n"


def still_answers(http: httpx.Client) -> None:
    assert http.get("/api/state").status_code == 200
    assert http.post("/api/animation", json={"name": "nod"}).status_code == 202


# ---------------------------------------------------------------------------- body size
def test_a_declared_100_mb_body_is_refused_before_a_byte_is_sent(
    robot: Robot, http: httpx.Client
) -> None:
    # the body is never sent: only a refusal on Content-Length can answer
    answer = raw_post(robot[1], head("/api/speak", f"Content-Length: {HUNDRED_MB}"))
    status, body = status_and_body(answer)
    assert status == 413
    assert f"a body of {HUNDRED_MB} bytes exceeds the {MAX_PAYLOAD}-byte limit" in body
    assert '"path":"/api/speak"' in body
    still_answers(http)


@pytest.mark.parametrize("chunked", [False, True], ids=["content-length", "chunked"])
def test_sending_100_mb_neither_grows_the_server_nor_stops_it(
    robot: Robot, http: httpx.Client, chunked: bool
) -> None:
    framing = "Transfer-Encoding: chunked" if chunked else f"Content-Length: {HUNDRED_MB}"
    http.get("/api/state")  # warm: first-request allocations are not the body's
    peak_rss_reset()  # then the peak is the RSS now
    before = peak_rss()
    answer = raw_post(robot[1], head("/api/look_at", framing), hundred_mb(chunked))
    grown = peak_rss() - before
    status, body = status_and_body(answer)
    assert status == 413
    # the server closes with the client's megabytes unread, so its kernel resets the
    # connection, and the client's may drop the answer's body after its head (seen once in a
    # fresh-clone run): the explanation is checked when it arrived, and in the test above
    assert not body or f"exceeds the {MAX_PAYLOAD}-byte limit on request bodies" in body
    assert grown < GROWTH_LIMIT, f"peak RSS grew {grown / 1e6:.0f} MB for a refused body"
    still_answers(http)


def test_five_huge_bodies_at_once_are_all_refused(robot: Robot, http: httpx.Client) -> None:
    answers: list[bytes] = []
    framing = "Transfer-Encoding: chunked"

    def one() -> None:
        answers.append(raw_post(robot[1], head("/api/speak", framing), hundred_mb(True)))

    http.get("/api/state")
    peak_rss_reset()  # then the peak is the RSS now
    before = peak_rss()
    threads = [threading.Thread(target=one, name=f"huge-{i}") for i in range(5)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30.0)
    grown = peak_rss() - before
    assert [status_and_body(a)[0] for a in answers] == [413] * 5
    assert grown < GROWTH_LIMIT, f"peak RSS grew {grown / 1e6:.0f} MB for five refused bodies"
    still_answers(http)


def test_a_chunked_body_within_the_limit_reaches_the_route(robot: Robot) -> None:
    payload = b'{"x": 1, "y": 0.2, "z": 0.1}'
    pieces = [payload[:7], payload[7:]]
    body = b"".join(b"%x\r\n%s\r\n" % (len(p), p) for p in pieces) + b"0\r\n\r\n"
    status, text = status_and_body(
        raw_post(
            robot[1],
            head("/api/look_at", "Transfer-Encoding: chunked", "Connection: close"),
            [body],
        )
    )
    assert (status, text) == (202, '{"v":1,"accepted":"/api/look_at"}')


def test_a_body_just_under_the_limit_is_parsed_and_just_over_is_413(http: httpx.Client) -> None:
    under = http.post("/api/speak", content=b"x" * MAX_PAYLOAD, headers=JSON)
    assert under.status_code == 400  # the parsers' own refusal: it got through
    assert under.json()["reason"] == f"text of {MAX_PAYLOAD} characters exceeds the 2000 limit"
    # an ordinary client sends its whole body before reading: it must hear the 413, not a
    # reset (the server reads and drops up to 1 MiB of a refused body before closing)
    for _ in range(5):
        over = http.post("/api/speak", content=b"x" * (MAX_PAYLOAD + 1), headers=JSON)
        assert over.status_code == 413
        assert over.json()["reason"] == (
            f"a body of {MAX_PAYLOAD + 1} bytes exceeds the {MAX_PAYLOAD}-byte limit on request "
            "bodies"
        )
        chunked = http.post(
            "/api/speak", content=iter([b"x" * 50_000] * 4), headers=JSON
        )  # 200 kB, chunked
        assert chunked.status_code == 413
        assert chunked.json()["reason"] == (
            f"a body of over {MAX_PAYLOAD} bytes exceeds the {MAX_PAYLOAD}-byte limit on request "
            "bodies"
        )
    still_answers(http)


# ---------------------------------------------------------------------------- hostile values
NUMBER_CASES = [
    (BIG, "must be finite, got 1222222222…(400 digits)"),
    ("1e400", "must be finite, got 1e400"),
    ("NaN", "must be finite, got NaN"),
    ("true", "must be a number, got true"),
    ('"1"', 'must be a number, got "1"'),
    ('{"a": {"b": [1, 2, 3]}}', 'must be a number, got {"a": {"b": [1, 2, 3]}}'),
]
ENDPOINTS = [
    ("/api/look_at", '{{"x": {v}, "y": 0, "z": 1}}', "'x'"),
    ("/api/humanoid/posture", '{{"pitch": 0, "roll": {v}, "yaw": 0, "height": 0}}', "'roll'"),
    ("/api/humanoid/speed", '{{"x": 0, "y": 0, "yaw": {v}}}', "'yaw'"),
]


@pytest.mark.parametrize(("value", "reason"), NUMBER_CASES)
@pytest.mark.parametrize("endpoint", ENDPOINTS, ids=[e[0] for e in ENDPOINTS])
def test_every_number_field_answers_400_with_the_reason(
    http: httpx.Client, endpoint: tuple[str, str, str], value: str, reason: str
) -> None:
    path, template, key = endpoint
    r = http.post(path, content=template.format(v=value), headers=JSON)
    assert r.status_code == 400, r.text
    assert r.json() == {"v": 1, "path": path, "reason": f"{key} {reason}"}
    still_answers(http)


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        ('{"text": "a\\u0000b"}', "text contains a NUL character (U+0000) at character 1"),
        ('{"text": "a\\u0007b"}', "text contains the control character U+0007 at character 1"),
        (
            '{"text": "a\\ud800b"}',
            "text contains a lone surrogate (U+D800) at character 1: "
            "half of a UTF-16 pair is not text",
        ),
        (
            '{"text": "hi", "locale": "en-US\\n"}',
            "'locale' must look like 'en-US', got \"en-US\\n\"",
        ),
        ("hello\x1b[2J", "text contains the control character U+001B at character 5"),
    ],
)
def test_speak_refuses_what_is_not_text(
    robot: Robot, http: httpx.Client, body: str, reason: str
) -> None:
    r = http.post("/api/speak", content=body.encode(), headers=JSON)
    assert (r.status_code, r.json()["reason"]) == (400, reason)
    assert not robot[0].speaking
    still_answers(http)


def test_speak_with_a_bom_speaks_the_text_not_the_json(robot: Robot, http: httpx.Client) -> None:
    runtime, _ = robot
    started: list[SpeechStarted] = []

    def on(event: Event) -> None:
        if isinstance(event, SpeechStarted):
            started.append(event)

    unsubscribe = runtime.events.subscribe(on)
    try:
        body = b'\xef\xbb\xbf{"text": "hello there", "locale": "en-US"}'
        r = http.post("/api/speak", content=body, headers={"content-type": "application/json"})
        assert r.status_code == 202
        assert eventually(lambda: bool(started))
    finally:
        unsubscribe()
    assert started[0].text == "hello there"


def test_refusals_never_echo_a_whole_value(http: httpx.Client) -> None:
    hostile: list[tuple[str, Any]] = [
        ("/api/speak", {"text": "hi", "locale": "x" * 30_000}),
        ("/api/animation", {"n" * 30_000: 1}),
        ("/api/look_at", {"x": ["y" * 30_000], "y": 0, "z": 1}),
        ("/api/humanoid/mode", {"mode": {"m": "z" * 30_000}}),
    ]
    for path, body in hostile:
        r = http.post(path, json=body)
        assert r.status_code == 400, (path, r.text[:200])
        assert len(r.json()["reason"]) < 200, (path, r.json()["reason"][:300])
    still_answers(http)


# ---------------------------------------------------------------------------- WebSocket
def test_a_huge_websocket_message_closes_that_socket_only(robot: Robot, http: httpx.Client) -> None:
    import asyncio

    import websockets

    url = robot[1].url.replace("http://", "ws://") + "ws"

    async def run() -> tuple[int | None, str]:
        async with websockets.connect(url, max_size=None) as ws:
            await ws.recv()  # hello
            await ws.send("x" * 1_000_000)  # the page never sends: 1 MB is hostile
            code = None  # still open after 5 s of state messages: the message was taken
            end = asyncio.get_running_loop().time() + 5.0
            try:
                while asyncio.get_running_loop().time() < end:
                    await asyncio.wait_for(ws.recv(), 5.0)
            except websockets.ConnectionClosed as closed:
                code = closed.rcvd.code if closed.rcvd is not None else None
        async with websockets.connect(url) as ws:
            hello = await asyncio.wait_for(ws.recv(), 5.0)
        return code, str(hello)

    code, hello = asyncio.run(run())
    assert code == 1009  # message too big: past the 64 KiB bound, not uvicorn's 16 MiB
    assert '"type":"hello"' in hello
    still_answers(http)


# ---------------------------------------------------------------------------- a linked humanoid
def test_hostile_humanoid_values_never_reach_the_robot(
    humanoid_robot: Robot,
) -> None:
    runtime, door = humanoid_robot
    link = runtime.humanoid
    assert link is not None
    assert eventually(lambda: link.summary() is not None, timeout=10.0)
    with httpx.Client(base_url=door.url, timeout=10.0) as http:
        cases = [
            ({"pitch": int(BIG), "roll": 0, "yaw": 0, "height": 0}, "'pitch' must be finite"),
            ({"pitch": 0, "roll": 1e300, "yaw": 0, "height": 0}, "stand_roll=1e+300 is out of"),
            ({"pitch": 0, "roll": 0, "yaw": 0, "height": -(10**300)}, "stand_height=-1e+300"),
        ]
        for body, says in cases:
            r = http.post("/api/humanoid/posture", json=body)
            assert r.status_code == 400, r.text
            assert says in r.json()["reason"]
        r = http.post(
            "/api/humanoid/speed", content=f'{{"x": {BIG}, "y": 0, "yaw": 0}}', headers=JSON
        )
        assert (r.status_code, r.json()["reason"]) == (
            400,
            "'x' must be finite, got 1222222222…(400 digits)",
        )
        state = http.get("/api/humanoid/state")
        assert state.status_code == 200
        assert state.json()["fsm_name"] == "Stop"  # nothing was sent that moved it


def test_an_absurd_content_length_is_refused_too(robot: Robot, http: httpx.Client) -> None:
    status, body = status_and_body(
        raw_post(robot[1], head("/api/speak", "Content-Length: 9999999999999999999"))
    )
    assert status == 413
    assert "a body of over 10^18 bytes exceeds the 65536-byte limit" in body
    still_answers(http)


def test_a_content_length_that_is_not_a_number_is_400() -> None:
    # uvicorn's h11 refuses it before any app; the guard still must not trust it (other servers)
    import asyncio

    from anima.frontdoors.web.limits import BodyLimit

    sent: list[dict[str, Any]] = []
    reached: list[bool] = []

    async def app(scope: Any, receive: Any, send: Any) -> None:
        reached.append(True)

    async def receive() -> dict[str, Any]:
        raise AssertionError("the body must not be read")

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    scope = {"type": "http", "path": "/api/speak", "headers": [(b"content-length", b"12ab")]}
    asyncio.run(BodyLimit(app, MAX_PAYLOAD)(scope, receive, send))
    assert not reached
    assert sent[0]["status"] == 400
    assert b"Content-Length '12ab' is not a byte count" in sent[1]["body"]
