"""MCP over streamable HTTP at ``/mcp`` on the dashboard's port (issue 16): the official
client in both protocol eras, plain HTTP as curl sends it, the token and the rebinding guard.
A real uvicorn on a free loopback port, the runtime on the simulated robot."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import anyio
import httpx
import pytest

from anima.build import build
from anima.config import (
    AnimaConfig,
    BehaviourConfig,
    McpConfig,
    MqttConfig,
    SpeechConfig,
    WebConfig,
)
from anima.frontdoors.mcp.server import INSTRUCTIONS
from anima.frontdoors.web import WebFrontDoor
from anima.runtime import Runtime
from anima.testing.tts import ScriptedEngine

from .clients import http_client, json_of, text_of

pytestmark = [pytest.mark.integration, pytest.mark.timeout(120)]
ACCEPT = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "curl", "version": "8"},
    },
}


def served(token: str | None = None, mcp: McpConfig | None = None) -> Iterator[WebFrontDoor]:
    cfg = AnimaConfig(
        mqtt=MqttConfig(enabled=False),
        web=WebConfig(port=0, token=token),
        behaviour=BehaviourConfig(full_blink_every_s=600.0),
        speech=SpeechConfig(audio_out="null"),
        mcp=mcp or McpConfig(),
    )
    runtime: Runtime = build(cfg, tts=[ScriptedEngine()])
    door = next(d for d in runtime.frontdoors if isinstance(d, WebFrontDoor))
    runtime.start()
    try:
        yield door
    finally:
        runtime.stop(ease=False)  # easing to rest took a real second per test


@pytest.fixture
def door() -> Iterator[WebFrontDoor]:
    yield from served()


@pytest.fixture
def tokened() -> Iterator[WebFrontDoor]:
    yield from served(token="s3cret")


def mcp_url(door: WebFrontDoor) -> str:
    return door.url + "mcp"


@pytest.mark.parametrize(("mode", "version"), [("legacy", "2025-11-25"), ("auto", "2026-07-28")])
def test_the_official_client_over_http(door: WebFrontDoor, mode: str, version: str) -> None:
    async def scenario() -> None:
        heard: list[Any] = []

        async def progress(done: float, total: float | None, message: str | None) -> None:
            heard.append((done, total, message))

        async with http_client(mcp_url(door), mode=mode) as client:
            assert client.protocol_version == version
            names = [t.name for t in (await client.list_tools()).tools]
            assert "play_animation" in names
            assert names[-1] == "reset_emergency_stop"
            nod = await client.call_tool(
                "play_animation", {"name": "nod"}, progress_callback=progress
            )
            assert not nod.is_error, text_of(nod)
            assert heard[-1] == (1.0, 1.0, "play_animation(name='nod'): succeeded")
            refused = await client.call_tool("look_at", {"x": 1, "y": 0, "z": 99})
            assert refused.is_error
            assert "z must be in [-10, 10]" in text_of(refused)
            # a cancel mid-gesture: the wave is held, the server goes on answering
            with anyio.move_on_after(1.0) as scope:
                await client.call_tool("play_animation", {"name": "LOOKUP_Waving"})
            assert scope.cancelled_caught
            with anyio.fail_after(10):
                while json_of(await client.read_resource("anima://state"))["move"] not in (
                    None,
                    "stop",
                ):
                    await anyio.sleep(0.05)
            assert not (await client.call_tool("wait", {"seconds": 0.05})).is_error

    anyio.run(scenario)


def test_a_listen_stream_hears_the_state_change(door: WebFrontDoor) -> None:
    async def scenario() -> None:
        async with http_client(mcp_url(door), mode="auto") as client:
            async with client.listen(resource_subscriptions=["anima://state"]) as updates:
                await client.call_tool("emergency_stop", {})
                with anyio.fail_after(10):
                    async for event in updates:
                        if str(getattr(event, "uri", "")) == "anima://state":
                            break
            await client.call_tool("reset_emergency_stop", {})

    anyio.run(scenario)


def test_curl_initialize_then_list_tools(door: WebFrontDoor) -> None:
    with httpx.Client(timeout=10) as http:
        first = http.post(mcp_url(door), json=INIT, headers=ACCEPT)
        assert first.status_code == 200
        session = first.headers["mcp-session-id"]
        assert '"serverInfo"' in first.text
        headers = {**ACCEPT, "Mcp-Session-Id": session, "MCP-Protocol-Version": "2025-11-25"}
        done = http.post(
            mcp_url(door),
            json={"jsonrpc": "2.0", "method": "notifications/initialized"},
            headers=headers,
        )
        assert done.status_code == 202
        listed = http.post(
            mcp_url(door), json={"jsonrpc": "2.0", "id": 2, "method": "tools/list"}, headers=headers
        )
        assert listed.status_code == 200
        assert '"emergency_stop"' in listed.text
        # a 2025-11-25 client's subscription, as it goes on the wire
        subscribe = {"uri": "anima://state"}
        subscribed = http.post(
            mcp_url(door),
            json={"jsonrpc": "2.0", "id": 3, "method": "resources/subscribe", "params": subscribe},
            headers=headers,
        )
        assert subscribed.status_code == 200
        assert '"result":{}' in subscribed.text.replace(" ", ""), subscribed.text


def test_the_token_is_required_when_the_dashboard_has_one(tokened: WebFrontDoor) -> None:
    with httpx.Client(timeout=10) as http:
        none = http.post(mcp_url(tokened), json=INIT, headers=ACCEPT)
        assert none.status_code == 401
        assert none.headers["www-authenticate"] == "Bearer"
        wrong = http.post(
            mcp_url(tokened), json=INIT, headers={**ACCEPT, "Authorization": "Bearer nope"}
        )
        assert wrong.status_code == 401
        right = http.post(
            mcp_url(tokened), json=INIT, headers={**ACCEPT, "Authorization": "Bearer s3cret"}
        )
        assert right.status_code == 200

    async def scenario() -> None:
        async with http_client(mcp_url(tokened), token="s3cret") as client:
            result = await client.call_tool("wait", {"seconds": 0.05})
            assert not result.is_error

    anyio.run(scenario)


def test_a_rebound_host_or_a_foreign_page_is_refused_on_loopback(door: WebFrontDoor) -> None:
    with httpx.Client(timeout=10) as http:
        rebound = http.post(
            mcp_url(door), json=INIT, headers={**ACCEPT, "Host": f"evil.example:{door.port}"}
        )
        assert rebound.status_code == 421
        foreign = http.post(
            mcp_url(door), json=INIT, headers={**ACCEPT, "Origin": "http://evil.example"}
        )
        assert foreign.status_code == 403
        # origins parsed, not glob-matched: these passed the SDK's "http://127.0.0.1:*"
        port = door.port
        for origin in (f"http://localhost:{port}@evil.example", f"http://127.0.0.1:{port}/evil"):
            tricked = http.post(mcp_url(door), json=INIT, headers={**ACCEPT, "Origin": origin})
            assert tricked.status_code == 403, origin
        # host names are case-insensitive: the SDK refused this one
        upper = http.post(mcp_url(door), json=INIT, headers={**ACCEPT, "Host": f"LOCALHOST:{port}"})
        assert upper.status_code == 200
        own = http.post(
            mcp_url(door), json=INIT, headers={**ACCEPT, "Origin": f"http://localhost:{port}"}
        )
        assert own.status_code == 200
        # and the dashboard's own API still answers
        assert http.get(door.url + "api/state").status_code == 200


def test_a_large_request_is_refused_before_it_is_read(door: WebFrontDoor) -> None:
    """/mcp is bounded as the REST bodies are (64 KiB, the web door's BodyLimit), not by the
    SDK's own limit: a 900 KB tool call never reaches the session or the SSE stream."""
    big = {"jsonrpc": "2.0", "id": 9, "method": "tools/call",
           "params": {"name": "say", "arguments": {"text": "x" * 900_000}}}  # fmt: skip
    with httpx.Client(timeout=10) as http:
        refused = http.post(mcp_url(door), json=big, headers=ACCEPT)
        assert refused.status_code == 413
        assert http.post(mcp_url(door), json=INIT, headers=ACCEPT).status_code == 200


def test_sessions_are_capped_and_idle_ones_closed(monkeypatch: pytest.MonkeyPatch) -> None:
    """At most MAX_SESSIONS at once (503 past it), each closed after SESSION_IDLE_S: the SDK's
    defaults were 10,000 sessions kept 30 minutes (1,188 initialize calls cost 64 MB). Small
    figures here, so the test is quick."""
    from anima.frontdoors.mcp import http as mcp_http

    assert (mcp_http.MAX_SESSIONS, mcp_http.SESSION_IDLE_S) == (32, 120.0)
    monkeypatch.setattr(mcp_http, "MAX_SESSIONS", 3)
    monkeypatch.setattr(mcp_http, "SESSION_IDLE_S", 0.5)
    for door in served():
        with httpx.Client(timeout=10) as http:
            for _ in range(3):
                assert http.post(mcp_url(door), json=INIT, headers=ACCEPT).status_code == 200
            full = http.post(mcp_url(door), json=INIT, headers=ACCEPT)
            assert full.status_code == 503
            assert "Too many open sessions" in full.text
            # the idle ones are closed: a new client gets in (bounded: 5 s)
            end = time.monotonic() + 5.0
            while (got := http.post(mcp_url(door), json=INIT, headers=ACCEPT)).status_code != 200:
                assert got.status_code == 503
                assert time.monotonic() < end, "idle sessions were never closed"
                time.sleep(0.1)


def test_mcp_http_off_serves_no_mcp() -> None:
    for door in served(mcp=McpConfig(http=False)):
        assert door.mcp is None
        with httpx.Client(timeout=10) as http:
            assert http.post(mcp_url(door), json=INIT, headers=ACCEPT).status_code == 404


def test_the_rest_of_the_dashboard_is_unchanged_with_mcp_on(door: WebFrontDoor) -> None:
    with httpx.Client(timeout=10) as http:
        assert http.get(door.url).status_code == 200
        assert http.post(door.url + "api/animation", json={"name": "nod"}).status_code == 202


def test_anima_mcp_url_bridges_stdio_to_a_running_serve(tokened: WebFrontDoor) -> None:
    import sys

    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    url = tokened.url.rstrip("/")
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "anima", "mcp", "--url", url, "--token", "s3cret"],
    )

    async def scenario() -> None:
        heard: list[Any] = []

        async def progress(done: float, total: float | None, message: str | None) -> None:
            heard.append(message)

        async with Client(params, mode="legacy", read_timeout_seconds=60) as client:
            assert client.instructions == INSTRUCTIONS  # the robot's, carried through
            names = [t.name for t in (await client.list_tools()).tools]
            assert "play_animation" in names
            nod = await client.call_tool(
                "play_animation", {"name": "nod"}, progress_callback=progress
            )
            assert not nod.is_error, text_of(nod)
            assert heard[-1] == "play_animation(name='nod'): succeeded"
            state = json_of(await client.read_resource("anima://state"))
            assert state["estop"] is False
            with anyio.move_on_after(1.0) as scope:
                await client.call_tool("play_animation", {"name": "LOOKUP_Waving"})
            assert scope.cancelled_caught
        runtime = tokened.runtime
        with anyio.fail_after(10):
            while runtime.state().move not in (None, "stop"):
                await anyio.sleep(0.05)

    anyio.run(scenario)


def test_a_bridge_to_nothing_says_so() -> None:
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-m", "anima", "mcp", "--url", "http://127.0.0.1:9"],
        check=False,
        capture_output=True,
        text=True,
        timeout=60,
        input="",
    )
    assert done.returncode == 2
    assert "error: mcp: the bridge to http://127.0.0.1:9/mcp failed" in done.stderr


def test_mcp_answers_again_after_the_dashboard_restarts(door: WebFrontDoor) -> None:
    async def nod() -> None:
        async with http_client(mcp_url(door)) as client:
            assert not (await client.call_tool("wait", {"seconds": 0.05})).is_error

    anyio.run(nod)
    door.stop()
    door.start()  # a new session manager for the new run (the SDK's runs only once)
    anyio.run(nod)


def test_the_sdk_is_loaded_at_the_first_request_and_a_broken_one_is_answered(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The MCP core (the SDK: ~1.2 s of CPU, ~27 MB) is made at the first request to /mcp, not
    at the door's start; an SDK that fails to load is a 503 naming why, and the rest serves on."""
    for door in served():
        assert door.mcp is not None
        assert door.mcp.server is None  # started, and no SDK loaded yet
        with httpx.Client(timeout=10) as http:
            assert http.get(door.url + "api/state").status_code == 200
            assert door.mcp.server is None
            assert http.post(mcp_url(door), json=INIT, headers=ACCEPT).status_code == 200
        assert door.mcp.server is not None

    from anima.frontdoors.mcp import http as mcp_http

    def broken(_self: object) -> None:
        raise ImportError("No module named 'mcp_types'")

    monkeypatch.setattr(mcp_http.McpHttp, "_make_server", broken)
    for door in served():
        with httpx.Client(timeout=10) as http:
            refused = http.post(mcp_url(door), json=INIT, headers=ACCEPT)
            assert refused.status_code == 503
            assert "MCP is not available: ImportError: No module named 'mcp_types'" in refused.text
            assert http.get(door.url + "api/state").status_code == 200
