"""The MCP door's core (issue 16), with no MCP in it: the tools, their calls, the resources.

A real runtime on the simulated robot (scripted speech, a null sink); each call runs through
the agent's executor from source ``mcp``, as the SDK's server will run it.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

from anima import commands as cmd
from anima.agent.plan import MAX_STEPS
from anima.config import McpConfig
from anima.errors import ConfigError
from anima.events import CommandRejected, MoveStarted, PlanStarted
from anima.frontdoors.mcp.resources import EVENTS_URI, STATE_URI
from anima.frontdoors.mcp.robot import Cancel, McpRobot
from anima.frontdoors.mcp.tools import tools_size
from anima.runtime import Runtime
from anima.testing import EventRecorder, eventually

from .conftest import make_mcp

pytestmark = pytest.mark.integration


def tool(mcp: McpRobot, name: str) -> dict[str, object]:
    found = [t for t in mcp.tools if t.name == name]
    assert found, [t.name for t in mcp.tools]
    return dict(found[0].input_schema)


# --------------------------------------------------------------------------- the tools


def test_every_action_is_a_tool_with_the_registrys_schema(mcp: McpRobot, runtime: Runtime) -> None:
    names = [t.name for t in mcp.tools]
    assert names[-3:] == ["stop", "emergency_stop", "reset_emergency_stop"]
    assert {"play_animation", "look_at", "look_at_target", "say", "wait", "run_plan"} <= set(names)
    assert "finish" not in names  # the conversation's, not the robot's
    play = tool(mcp, "play_animation")
    enum = play["properties"]["name"]["enum"]  # type: ignore[index]
    assert "nod" in enum
    assert set(enum) <= set(runtime.library.gestures())  # narrowed to the loaded library
    look = tool(mcp, "look_at")["properties"]["z"]  # type: ignore[index]
    assert (look["minimum"], look["maximum"]) == (-10, 10)
    assert tool(mcp, "look_at")["required"] == ["x", "y", "z"]
    steps = tool(mcp, "run_plan")["properties"]["actions"]  # type: ignore[index]
    assert steps["maxItems"] == MAX_STEPS
    assert "stop" not in steps["items"]["properties"]["action"]["enum"]
    # small enough for a model's context: every client sends it with each request
    assert tools_size(mcp.tools) < 6000


def test_allow_and_deny_narrow_the_actions_never_the_stops(runtime: Runtime) -> None:
    only = make_mcp(runtime, McpConfig(allow=("play_animation",)))
    assert [t.name for t in only.tools] == [
        "play_animation",
        "stop",
        "emergency_stop",
        "reset_emergency_stop",
    ]  # run_plan was not allowed
    assert only.call("say", {"text": "hi"}).error
    denied = make_mcp(runtime, McpConfig(deny=("say", "run_plan")))
    assert "say" not in [t.name for t in denied.tools]
    assert "run_plan" not in [t.name for t in denied.tools]
    with pytest.raises(ConfigError, match="emergency_stop cannot be denied"):
        McpConfig(deny=("emergency_stop",))


# --------------------------------------------------------------------------- calls


def test_a_call_returns_when_the_gesture_has_finished_with_progress(
    mcp: McpRobot, runtime: Runtime
) -> None:
    recorder = EventRecorder().attach(runtime.events)
    heard: list[tuple[float, float, str]] = []
    out = mcp.call("play_animation", {"name": "nod"}, progress=lambda *p: heard.append(p))
    assert not out.error, out.text
    assert out.text == "done: play_animation(name='nod'): succeeded"
    assert out.data is not None
    assert out.data["outcome"] == "succeeded"
    assert heard[-1] == (1.0, 1.0, "play_animation(name='nod'): succeeded")
    started = recorder.wait_for(PlanStarted)
    assert started.source == "mcp"
    assert recorder.of(MoveStarted)[0].name == "nod"


@pytest.mark.parametrize(
    ("name", "args", "reason"),
    [
        ("dance", {}, "unknown tool 'dance' (tools: look_at, "),
        ("play_animation", {"name": "dance"}, "play_animation: name must be one of 'LOOKUP"),
        ("look_at", {"x": 1, "y": 0, "z": 99}, "look_at: z must be in [-10, 10], got float 99"),
        ("look_at", {"x": 1}, "missing argument 'y'"),
        ("say", {"text": "hi", "loud": True}, "unknown argument 'loud'"),
        ("run_plan", {"actions": []}, "actions must be a non-empty list"),
        ("run_plan", {"actions": [{"action": "stop"}]}, "step 1: unknown action 'stop'"),
    ],
)
def test_a_refusal_is_an_error_with_its_reason_and_published(
    mcp: McpRobot, runtime: Runtime, name: str, args: dict[str, object], reason: str
) -> None:
    recorder = EventRecorder().attach(runtime.events, CommandRejected.kind)
    out = mcp.call(name, args)
    assert out.error
    assert reason in out.text
    rejected = recorder.wait_for(CommandRejected)
    assert rejected.source == "mcp"
    assert rejected.reason == out.text


def test_a_plan_with_one_bad_step_moves_nothing(mcp: McpRobot, runtime: Runtime) -> None:
    recorder = EventRecorder().attach(runtime.events)
    steps = [
        {"action": "play_animation", "args": {"name": "nod"}},
        {"action": "look_at", "args": {"x": 1, "y": 0, "z": 50}},
    ]
    out = mcp.call("run_plan", {"actions": steps})
    assert out.error
    assert out.text.startswith("step 2 look_at: z must be in [-10, 10]")
    runtime.events.flush(1.0)
    assert recorder.of(PlanStarted) == []
    assert recorder.of(MoveStarted) == []


def test_a_plan_runs_in_order_and_reports_each_step(mcp: McpRobot) -> None:
    heard: list[str] = []
    steps = [
        {"action": "say", "args": {"text": "hello"}},
        {"action": "play_animation", "args": {"name": "nod"}},
    ]
    out = mcp.call("run_plan", {"actions": steps}, progress=lambda d, t, m: heard.append(m))
    assert not out.error, out.text
    assert out.data is not None
    assert [s["status"] for s in out.data["steps"]] == ["succeeded", "succeeded"]  # type: ignore[index,union-attr]
    ended = [m for m in heard if not m.startswith("running")]
    assert ended == ["say(text='hello'): succeeded", "play_animation(name='nod'): succeeded"]


def test_the_clients_cancel_ends_the_call_and_holds_the_motion(
    mcp: McpRobot, runtime: Runtime
) -> None:
    cancelled = Cancel()
    out: list[object] = []
    caller = threading.Thread(
        target=lambda: out.append(
            mcp.call("play_animation", {"name": "LOOKUP_Waving"}, cancelled=cancelled)
        )
    )
    caller.start()
    assert eventually(lambda: runtime.state().move == "LOOKUP_Waving", timeout=5)
    cancelled.set()
    caller.join(5)
    assert out, "the call did not return after its cancel"
    result = out[0]
    assert result.error  # type: ignore[attr-defined]
    assert result.text.startswith("interrupted: play_animation")  # type: ignore[attr-defined]
    assert "cancelled by the MCP client" in result.text  # type: ignore[attr-defined]
    assert eventually(lambda: runtime.state().move in (None, "stop"), timeout=2)


def test_an_emergency_stop_while_a_tool_runs_ends_it_and_refuses_the_next(
    mcp: McpRobot, runtime: Runtime
) -> None:
    out: list[object] = []
    caller = threading.Thread(target=lambda: out.append(mcp.call("wait", {"seconds": 30})))
    caller.start()
    assert eventually(lambda: mcp._executor.busy, timeout=5)
    stopped = mcp.call("emergency_stop")
    assert not stopped.error
    caller.join(5)
    assert out
    assert out[0].error  # type: ignore[attr-defined]
    refused = mcp.call("play_animation", {"name": "nod"})
    assert refused.error
    assert "'nod' refused: emergency stop is active (reset to resume)" in refused.text
    assert runtime.state().estop
    assert not mcp.call("reset_emergency_stop").error
    assert not runtime.state().estop


def test_calls_past_the_rate_are_refused_but_the_stops_never(runtime: Runtime) -> None:
    mcp = make_mcp(runtime, McpConfig(rate_per_s=0.01, burst=2))
    try:
        assert not mcp.call("wait", {"seconds": 0.01}).error
        assert not mcp.call("wait", {"seconds": 0.01}).error
        third = mcp.call("wait", {"seconds": 0.01})
        assert third.error
        assert "too many calls: at most 2 at once" in third.text
        for _ in range(5):
            assert not mcp.call("stop").error
    finally:
        mcp.stop()


# --------------------------------------------------------------------------- resources


def test_the_resources_are_json_of_the_robot(mcp: McpRobot) -> None:
    mcp.call("play_animation", {"name": "nod"})
    state = json.loads(mcp.read(STATE_URI))
    assert state["v"] == 1
    assert state["estop"] is False
    assert "loop" in state
    events = json.loads(mcp.read(EVENTS_URI))["events"]
    assert "plan_started" in [e["kind"] for e in events]
    assert "nod" in json.loads(mcp.read("anima://animations"))["gestures"]
    assert len(json.loads(mcp.read("anima://body"))["channels"]) == 28
    assert json.loads(mcp.read("anima://attention")) == {"v": 1, "attention": None}  # no camera
    with pytest.raises(KeyError):
        mcp.read("anima://nothing")


def test_memory_is_a_resource_and_remember_a_tool(runtime: Runtime, tmp_path: Path) -> None:
    from anima import commands as cmd
    from anima.agent.remembering import shared_memory
    from anima.agent.vocabulary import robot_registry
    from anima.config.memory import MemoryConfig

    runtime.execute(cmd.ResetEmergencyStop())
    registry = robot_registry(runtime)
    memory = shared_memory(None, MemoryConfig(path=str(tmp_path / "m.sqlite3")), registry)
    assert memory is not None
    robot = McpRobot(runtime, registry, McpConfig(), memory=memory)
    robot.start()
    try:
        assert json.loads(robot.read("anima://memory"))["memory"] == {
            "person": None, "count": 0, "memories": [],
        }  # fmt: skip
        outcome = robot.call("remember", {"what": "my name is Ana", "who": "Ana"})
        assert not outcome.error, outcome
        robot.call("remember", {"what": "I like jazz"})
        seen = json.loads(robot.read("anima://memory"))["memory"]
        assert seen["person"] == "Ana"
        assert [(m["who"], m["what"]) for m in seen["memories"]] == [
            ("Ana", "I like jazz"), ("Ana", "my name is Ana"),
        ]  # fmt: skip
        assert robot.call("remember", {"what": ""}).error  # refused, with its reason
        assert robot.call("forget", {"everything": True}).error is False
        assert json.loads(robot.read("anima://memory"))["memory"]["count"] == 0
        assert json.loads(robot.read("anima://persona")) == {"v": 1, "persona": None}  # no agent
    finally:
        robot.stop()
        memory.store.close()
    off = McpRobot(runtime, robot_registry(runtime), McpConfig())
    assert json.loads(off.read("anima://memory")) == {"v": 1, "memory": None}


def test_a_watcher_hears_the_state_change(mcp: McpRobot, runtime: Runtime) -> None:
    changed: list[str] = []
    mcp.watch(changed.append)
    runtime.execute(cmd.EmergencyStop())
    try:
        assert eventually(lambda: STATE_URI in changed, timeout=5)
    finally:
        runtime.execute(cmd.ResetEmergencyStop())


def test_the_prompt_names_every_tool(mcp: McpRobot) -> None:
    text = mcp.prompt()
    for t in mcp.tools:
        assert t.name in text
    assert "look_at(x: float, y: float, z: float)" in text
