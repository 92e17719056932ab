"""``anima mcp`` over stdio with the official SDK's client (issue 16): what a desktop client
does — initialize, list, call, cancel, refuse, estop, read and subscribe — in both protocol
eras the SDK speaks (2025-11-25 by handshake, 2026-07-28 per request).

A stdio server serves one session, and starting one (an interpreter, the MCP SDK's import, a
runtime) takes seconds: the module's tests share one ``anima mcp`` per protocol mode, each test
beginning as a fresh server would, with no motion and no emergency stop."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from anyio.from_thread import start_blocking_portal
from mcp import Client

from .clients import json_of, stdio_client, text_of, write_config

pytestmark = [pytest.mark.integration, pytest.mark.timeout(120)]

Scenario = Callable[[Client], Awaitable[None]]


class Served:
    """The module's ``anima mcp`` processes, one per protocol mode, each started at its first
    use and driven from one event loop (a portal's thread) across the tests."""

    def __init__(self, config: Path) -> None:
        self._config = config
        self._stack = contextlib.ExitStack()
        self._portal = self._stack.enter_context(start_blocking_portal())
        self._clients: dict[str, Client] = {}

    def run(self, scenario: Scenario, mode: str = "legacy") -> None:
        client = self._clients.get(mode)
        if client is None:
            session = self._portal.wrap_async_context_manager(stdio_client(self._config, mode=mode))
            client = self._clients[mode] = self._stack.enter_context(session)
        self._portal.call(self._afresh, client, scenario)

    @staticmethod
    async def _afresh(client: Client, scenario: Scenario) -> None:
        with anyio.fail_after(30):  # as a fresh server: nothing moving, no emergency stop
            await client.call_tool("reset_emergency_stop", {})
            await client.call_tool("stop", {})
        await scenario(client)

    def close(self) -> None:
        self._stack.close()


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    # one session serves the module: its burst covers all the calls (the rate limit has its
    # own test in test_mcp_robot.py)
    served = Served(write_config(tmp_path_factory.mktemp("mcp"), mcp={"burst": 1000}))
    try:
        yield served
    finally:
        served.close()


async def since_now(client: Client) -> float:
    """The server's clock now: the events of a test are the ones after it (the session is
    shared)."""
    return float(json_of(await client.read_resource("anima://state"))["t"])


@pytest.mark.parametrize(("mode", "version"), [("legacy", "2025-11-25"), ("auto", "2026-07-28")])
def test_initialize_list_and_call_each_builtin(served: Served, mode: str, version: str) -> None:
    async def scenario(client: Client) -> None:
        assert client.protocol_version == version
        assert client.server_info.name == "anima"
        tools = {t.name: t for t in (await client.list_tools()).tools}
        assert set(tools) == {
            "look_at", "look_at_target", "play_animation", "say", "wait", "run_plan",
            "stop", "emergency_stop", "reset_emergency_stop", "remember", "forget",
        }  # fmt: skip
        assert "nod" in tools["play_animation"].input_schema["properties"]["name"]["enum"]
        calls: list[tuple[str, dict[str, Any], str]] = [
            ("play_animation", {"name": "nod"}, "done: play_animation(name='nod')"),
            ("look_at", {"x": 1.0, "y": 0.3, "z": 0.1}, "done: look_at("),
            ("look_at_target", {"name": "LOOKUPPostureDefault"}, "done: look_at_target("),
            ("say", {"text": "Hello from MCP"}, "done: say(text='Hello from MCP')"),
            ("wait", {"seconds": 0.1}, "done: wait(seconds=0.1)"),
            (
                "run_plan",
                {"actions": [{"action": "wait", "args": {"seconds": 0.1}}]},
                "done: wait(seconds=0.1): succeeded",
            ),
            ("stop", {}, "stopped"),
            ("emergency_stop", {}, "emergency stop: motion held"),
            ("reset_emergency_stop", {}, "emergency stop released"),
        ]
        for name, args, starts in calls:
            with anyio.fail_after(30):
                result = await client.call_tool(name, args)
            assert not result.is_error, (name, text_of(result))
            assert text_of(result).startswith(starts), text_of(result)
        played = await client.call_tool("play_animation", {"name": "nod"})
        assert played.structured_content["steps"][0]["status"] == "succeeded"

    served.run(scenario, mode)


def test_a_call_reports_progress_and_returns_when_the_gesture_ends(served: Served) -> None:
    async def scenario(client: Client) -> None:
        heard: list[tuple[float, float | None, str | None]] = []

        async def progress(done: float, total: float | None, message: str | None) -> None:
            heard.append((done, total, message))

        t0 = time.monotonic()
        result = await client.call_tool(
            "play_animation", {"name": "LOOKUP_Waving"}, progress_callback=progress
        )
        took = time.monotonic() - t0
        assert not result.is_error, text_of(result)
        assert took > 1.0  # the wave plays for seconds: the answer waits for its end
        assert heard[-1] == (1.0, 1.0, "play_animation(name='LOOKUP_Waving'): succeeded")
        assert any(m is not None and m.startswith("running") for _, _, m in heard)

    served.run(scenario)


@pytest.mark.parametrize("mode", ["legacy", "auto"])
def test_the_clients_cancel_holds_the_motion_mid_gesture(served: Served, mode: str) -> None:
    async def scenario(client: Client) -> None:
        since = await since_now(client)
        with anyio.move_on_after(1.0) as scope:
            await client.call_tool("play_animation", {"name": "LOOKUP_Waving"})
        assert scope.cancelled_caught  # the wave was still playing: the client gave up
        with anyio.fail_after(10):
            while True:
                state = json_of(await client.read_resource("anima://state"))
                if state["move"] in (None, "stop"):
                    break
                await anyio.sleep(0.05)
        events = json_of(await client.read_resource("anima://events"))["events"]
        finished = [e for e in events if e["kind"] == "plan_finished" and e["t"] > since]
        assert finished
        assert finished[-1]["outcome"] == "interrupted"
        # and the server goes on answering
        assert not (await client.call_tool("wait", {"seconds": 0.05})).is_error

    served.run(scenario, mode)


def test_refusals_are_tool_errors_with_the_doors_reasons(served: Served) -> None:
    async def scenario(client: Client) -> None:
        cases = [
            ("play_animation", {"name": "dance"}, "name must be one of"),
            ("look_at", {"x": 1, "y": 0, "z": 99}, "z must be in [-10, 10], got float 99"),
            ("no_such_tool", {}, "unknown tool 'no_such_tool'"),
        ]
        for name, args, reason in cases:
            result = await client.call_tool(name, args)
            assert result.is_error
            assert reason in text_of(result)
        await client.call_tool("emergency_stop", {})
        refused = await client.call_tool("play_animation", {"name": "nod"})
        assert refused.is_error
        assert "'nod' refused: emergency stop is active (reset to resume)" in text_of(refused)

    served.run(scenario)


def test_an_emergency_stop_while_a_tool_runs(served: Served) -> None:
    async def scenario(client: Client) -> None:
        results: list[types.CallToolResult] = []
        since = await since_now(client)

        async def long_wait() -> None:
            results.append(await client.call_tool("wait", {"seconds": 30}))

        async with anyio.create_task_group() as tg:
            tg.start_soon(long_wait)
            with anyio.fail_after(10):
                while json_of(await client.read_resource("anima://state"))["move"] is None:
                    events = json_of(await client.read_resource("anima://events"))["events"]
                    if any(e["kind"] == "action_status" and e["t"] > since for e in events):
                        break
                    await anyio.sleep(0.05)
            stopped = await client.call_tool("emergency_stop", {})
            assert not stopped.is_error
        assert results
        assert results[0].is_error
        assert "interrupted" in text_of(results[0])
        assert json_of(await client.read_resource("anima://state"))["estop"] is True

    served.run(scenario)


def test_resources_read_and_a_subscription_hears_the_change(served: Served) -> None:
    # a listen stream (2026-07-28): the SDK's resources/subscribe helper is deprecated and
    # warned about (issue 30); the 2025-11-25 subscription is checked on the wire in
    # test_mcp_http.py::test_curl_initialize_then_list_tools
    async def scenario(client: Client) -> None:
        uris = {str(r.uri) for r in (await client.list_resources()).resources}
        assert uris == {
            "anima://state", "anima://events", "anima://animations", "anima://body",
            "anima://attention", "anima://memory", "anima://persona",
        }  # fmt: skip
        body = json_of(await client.read_resource("anima://body"))
        assert len(body["channels"]) == 28
        assert "nod" in json_of(await client.read_resource("anima://animations"))["gestures"]
        async with client.listen(resource_subscriptions=["anima://state"]) as updates:
            await client.call_tool("emergency_stop", {})
            with anyio.fail_after(10):
                async for event in updates:
                    if str(getattr(event, "uri", "")) == "anima://state":
                        break
        prompt = await client.get_prompt("drive_robot")
        assert "emergency_stop" in prompt.messages[0].content.text  # type: ignore[union-attr]

    served.run(scenario, "auto")


def test_a_linked_humanoids_actions_and_the_users_own_are_tools(tmp_path: Path) -> None:
    (tmp_path / "my_robot_actions.py").write_text(
        "from anima.agent import ActionRegistry, ActionResult\n\n"
        "def register(registry: ActionRegistry) -> None:\n"
        "    @registry.action()\n"
        "    def dance(ctx: object, seconds: float = 3.0) -> ActionResult:\n"
        '        """Dance for a while."""\n'
        "        return (True, 'danced')\n",
        encoding="utf-8",
    )
    import yaml

    from .clients import QUIET

    cfg = tmp_path / "anima.yaml"
    cfg.write_text(
        yaml.safe_dump(
            {
                **QUIET,
                "humanoid": {"type": "sim", "sim_port": 0},
                "agent": {"user_actions": "my_robot_actions"},
            }
        ),
        encoding="utf-8",
    )

    async def scenario() -> None:
        import os

        from mcp import Client
        from mcp.client.stdio import StdioServerParameters

        params = StdioServerParameters(
            command=__import__("sys").executable,
            args=["-m", "anima", "mcp", "--config", str(cfg)],
            env={**os.environ, "PYTHONPATH": str(tmp_path)},
        )
        async with Client(params, mode="legacy", read_timeout_seconds=60) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            assert "dance" in tools
            assert tools["dance"].description == "Dance for a while."
            assert {"walk", "set_gait"} & set(tools), sorted(tools)
            danced = await client.call_tool("dance", {"seconds": 1.0})
            assert not danced.is_error, text_of(danced)
            assert "danced" in text_of(danced)

    anyio.run(scenario)
