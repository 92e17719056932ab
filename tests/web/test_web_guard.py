"""A page from another origin can neither read nor drive the robot (issue 30): the Host/Origin
guard on every route and the WebSocket handshake of a loopback door, and JSON-only commands.

Before the fix, ``POST /api/reset`` with ``Origin: http://evil.example`` and a ``text/plain``
body answered 202 and released the emergency stop, ``GET /api/state`` with ``Host:
evil.example:PORT`` answered 200, and a WebSocket with a foreign ``Origin`` read every event."""

from __future__ import annotations

import asyncio
import base64
import json
import os

import httpx
import pytest
import websockets

from anima.frontdoors.web import WebFrontDoor
from anima.frontdoors.web.guard import Guard, is_loopback, parse_authority, parse_origin
from anima.runtime import Runtime

pytestmark = pytest.mark.integration

Robot = tuple[Runtime, WebFrontDoor]
EVIL = "http://evil.example"


def test_a_foreign_page_cannot_release_the_estop(robot: Robot, http: httpx.Client) -> None:
    runtime, _ = robot
    assert http.post("/api/estop").status_code == 202  # curl -X POST: no body, no Origin
    assert runtime.estopped
    attack = http.post(
        "/api/reset", headers={"Origin": EVIL, "Content-Type": "text/plain"}, content="x"
    )
    assert attack.status_code == 403
    assert attack.json() == {
        "v": 1,
        "path": "/api/reset",
        "reason": f"Origin '{EVIL}' is not this server: only pages served here "
        f"(http://127.0.0.1:{robot[1].port}, http://localhost:{robot[1].port}) "
        "may drive the robot",
    }
    # the same "simple" request without an Origin (a form post, text/plain): JSON only
    plain = http.post("/api/reset", headers={"Content-Type": "text/plain"}, content="x")
    assert plain.status_code == 415
    assert plain.json()["reason"] == (
        "the body must be application/json, not 'text/plain'"
        " (with curl: --json '{…}', or -H 'Content-Type: application/json')"
    )
    assert runtime.estopped
    assert http.post("/api/reset").status_code == 202
    assert not runtime.estopped


def test_a_rebound_host_is_refused_on_every_route(robot: Robot, http: httpx.Client) -> None:
    port = robot[1].port
    for path in ("/", "/api/state", "/openapi.json", "/static/app.js", "/mcp"):
        got = http.get(path, headers={"Host": f"evil.example:{port}"})
        assert got.status_code == 421, path
        assert "is not this server" in got.json()["reason"]
    refused = http.post("/api/estop", headers={"Host": f"evil.example:{port}"})
    assert refused.status_code == 421
    assert not robot[0].estopped
    # host names are case-insensitive; any loopback name with the served port is this server
    for host in (f"LOCALHOST:{port}", f"localhost:{port}", f"[::1]:{port}", "127.0.0.1"):
        assert http.get("/api/state", headers={"Host": host}).status_code == 200, host
    for host in (f"127.0.0.1:{port + 1}", f"localhost:{port}@evil.example", "", "[::1"):
        assert http.get("/api/state", headers={"Host": host}).status_code == 421, host


def test_origins_are_parsed_not_matched_as_text(robot: Robot, http: httpx.Client) -> None:
    port = robot[1].port
    refused = [
        EVIL,
        "null",
        f"http://localhost:{port}@evil.example",
        f"http://127.0.0.1:{port}/evil",
        f"http://127.0.0.1:{port}.evil.example",
        f"http://127.0.0.1:{port + 1}",
        f"http://127.0.0.1:{port}/",
        f"ftp://127.0.0.1:{port}",
        "http://127.0.0.1",  # port 80: another server
        f"http://evil.example:{port}",
    ]
    for origin in refused:
        got = http.post("/api/stop_animation", headers={"Origin": origin})
        assert got.status_code == 403, origin
    accepted = [
        f"http://127.0.0.1:{port}",
        f"http://LOCALHOST:{port}",
        f"http://[::1]:{port}",
        f"HTTP://localhost:{port}",
    ]
    for origin in accepted:
        got = http.post("/api/stop_animation", headers={"Origin": origin})
        assert got.status_code == 202, origin


def test_the_websocket_handshake_is_guarded(robot: Robot) -> None:
    door = robot[1]
    url = f"ws://127.0.0.1:{door.port}/ws"

    async def status(origin: str) -> int:
        try:
            async with websockets.connect(url, origin=websockets.Origin(origin)) as ws:
                json.loads(await asyncio.wait_for(ws.recv(), 5))
                return 101
        except websockets.InvalidStatus as exc:
            return exc.response.status_code

    assert asyncio.run(status(EVIL)) == 403
    assert asyncio.run(status("null")) == 403
    assert asyncio.run(status(f"http://127.0.0.1:{door.port}")) == 101
    # a rebound name on the handshake (as a browser sends it; websockets sets Host itself)
    key = base64.b64encode(os.urandom(16)).decode()
    handshake = {
        "Host": f"evil.example:{door.port}",
        "Connection": "Upgrade",
        "Upgrade": "websocket",
        "Sec-WebSocket-Key": key,
        "Sec-WebSocket-Version": "13",
    }
    with httpx.Client(timeout=5.0) as http:
        assert http.get(f"http://127.0.0.1:{door.port}/ws", headers=handshake).status_code == 421


@pytest.mark.parametrize(
    ("content_type", "body", "status"),
    [
        ("application/x-www-form-urlencoded", b'{"name":"nod"}', 415),  # curl -d's default
        ("multipart/form-data; boundary=x", b"--x--", 415),
        ("text/plain;charset=UTF-8", b'{"name":"nod"}', 415),  # a page's fetch of a string
        (None, b'{"name":"nod"}', 415),  # a Blob without a type
        ("application/json", b'{"name":"nod"}', 202),
        ("Application/JSON; charset=utf-8", b'{"name":"nod"}', 202),
    ],
)
def test_commands_are_json_only(
    http: httpx.Client, content_type: str | None, body: bytes, status: int
) -> None:
    headers = {} if content_type is None else {"Content-Type": content_type}
    got = http.post("/api/animation", headers=headers, content=body)
    assert got.status_code == status, got.text
    if status == 415:
        reason = got.json()["reason"]
        assert "application/json" in reason
        assert content_type is None or "not" in reason


def test_parsing_hosts_and_origins() -> None:
    assert parse_authority("LocalHost:8080") is not None
    assert parse_authority("[::1]:80") == parse_authority("[::1]:0080")
    for bad in ("", ":80", "a:b", "a:99999", "a:0", "a@b", "a/b", "[::1]x", "[zz]:1", "é:1"):
        assert parse_authority(bad) is None, bad
    assert parse_origin("https://localhost") == ("https", parse_authority("localhost:443"))
    for bad in ("null", "localhost:80", "file://", "http://", "http://a:1/", "http://u@a"):
        assert parse_origin(bad) is None, bad
    assert all(is_loopback(h) for h in ("localhost", "LOCALHOST.", "127.9.9.9", "::1"))
    assert not any(is_loopback(h) for h in ("evil.example", "10.0.0.1", "0.0.0.0", "127.x"))


def test_off_loopback_the_token_protects_not_the_origin() -> None:
    """A door on the LAN (web.host 0.0.0.0, a token required) serves whatever Host and Origin
    a proxy passes on; its token is what a foreign page lacks."""
    scope = {"type": "http", "method": "POST", "path": "/api/reset", "server": ("0.0.0.0", 80)}
    headers = {b"host": b"robot.example", b"origin": EVIL.encode()}
    assert Guard(None, loopback=False).refusal(scope, headers) is None  # type: ignore[arg-type]
    assert Guard(None, loopback=True).refusal(scope, headers) is not None  # type: ignore[arg-type]
    headers[b"content-type"] = b"text/plain"
    refusal = Guard(None, loopback=False).refusal(scope, headers)  # type: ignore[arg-type]
    assert refusal is not None
    assert refusal[0] == 415


def test_the_fleet_page_is_guarded_too() -> None:
    """``anima fleet serve`` on loopback: before, any page could post ``reset`` to it and
    release every robot's emergency stop."""
    import threading

    import uvicorn

    from anima.fleet import FleetWatcher
    from anima.fleet.web import make_app
    from anima.frontdoors.mqtt.broker import EmbeddedBroker, free_port
    from anima.testing import eventually

    broker = EmbeddedBroker(free_port())
    broker.start()
    watcher = FleetWatcher(broker.address).start()
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(make_app(watcher), host="127.0.0.1", port=port,
                                           log_level="warning"))  # fmt: skip
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        assert eventually(lambda: server.started, timeout=10)
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=5.0) as http:
            foreign = http.post("/api/fleet/reset", headers={"Origin": EVIL}, json={})
            assert foreign.status_code == 403
            rebound = http.get("/api/fleet", headers={"Host": f"evil.example:{port}"})
            assert rebound.status_code == 421
            plain = http.post(
                "/api/fleet/reset", headers={"Content-Type": "text/plain"}, content="{}"
            )
            assert plain.status_code == 415
            own = f"http://127.0.0.1:{port}"
            mine = http.post("/api/fleet/reset", headers={"Origin": own}, json={})
            assert mine.status_code == 409  # through the guard: no robot online
    finally:
        server.should_exit = True
        thread.join(5)
        watcher.stop()
        broker.stop()


def test_a_refusal_reads_as_every_refusal_of_the_door(robot: Robot, http: httpx.Client) -> None:
    port = robot[1].port
    guarded = http.get("/api/state", headers={"Host": f"evil.example:{port}"})
    parsed = http.post("/api/look_at", json={"x": 1})
    assert guarded.headers["content-type"] == parsed.headers["content-type"] == "application/json"
    assert guarded.text.startswith('{"v":1,"path":"/api/state","reason":"Host ')
    assert parsed.text.startswith('{"v":1,"path":"/api/look_at","reason":')
