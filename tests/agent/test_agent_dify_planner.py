"""The Dify planner against a scripted chat-messages server on 127.0.0.1."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator

import pytest

from anima.agent.planners import APOLOGY, create_planner
from anima.agent.planners.dify import DifyPlanner
from anima.agent.vocabulary import builtin_registry
from anima.config import AgentConfig, DifyPlannerConfig
from anima.events import CommandRejected, Event, EventHub
from anima.testing.llm import Scripted, ScriptedDifyServer

pytestmark = pytest.mark.integration

pytest.importorskip("httpx")


@pytest.fixture
def server() -> Iterator[ScriptedDifyServer]:
    with ScriptedDifyServer() as srv:
        yield srv


def _answer(response: str, actions: list[str]) -> str:
    return json.dumps({"response": response, "action": actions})  # the seed's key


def test_conversation_id_is_kept_and_reset(
    server: ScriptedDifyServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TEST_DIFY_KEY", "app-123")
    server.push(
        Scripted.dify(_answer("Sure.", ["play_animation('nod')"])),
        Scripted.dify(_answer("Done.", [])),
        Scripted.dify(_answer("Hello, who are you?", [])),
    )
    cfg = AgentConfig(
        planner=DifyPlannerConfig(
            base_url=server.base_url, api_key_env="TEST_DIFY_KEY", user="robot-7"
        )
    )
    planner = create_planner(cfg, builtin_registry())
    assert isinstance(planner, DifyPlanner)
    try:
        first = planner.plan("nod please")
        assert planner.conversation_id == "conv-1"
        follow = planner.feedback("Robot feedback: Execution ['play_animation(name='nod')'] done")
        planner.reset()  # finish()
        assert planner.conversation_id is None
        fresh = planner.plan("hello")
    finally:
        planner.close()
    assert first.response == "Sure."
    assert first.actions == ["play_animation('nod')"]
    assert follow is not None
    assert follow.response == "Done."
    assert fresh.response == "Hello, who are you?"
    assert planner.conversation_id == "conv-2"
    bodies = [r.body for r in server.requests]
    assert [b["conversation_id"] for b in bodies] == ["", "conv-1", ""]
    assert bodies[0] == {
        "inputs": {},
        "query": "nod please",
        "response_mode": "blocking",
        "conversation_id": "",
        "user": "robot-7",
    }
    assert bodies[1]["query"].startswith("Robot feedback:")
    assert server.requests[0].path == "/v1/chat-messages"
    assert server.requests[0].headers["authorization"] == "Bearer app-123"


def test_plain_text_answers_are_spoken_without_actions(server: ScriptedDifyServer) -> None:
    server.push(Scripted.dify("I am a robot, nice to meet you."))
    planner = DifyPlanner(base_url=server.base_url, api_key="k")
    try:
        reply = planner.plan("who are you?")
    finally:
        planner.close()
    assert reply.response == "I am a robot, nice to meet you."
    assert reply.actions == []


@pytest.mark.parametrize(
    ("scripted", "why"),
    [
        (Scripted.error(500), "HTTP 500"),
        (Scripted(body={"event": "message"}), "no 'answer' text"),
        (Scripted.dify('{"response": "x", "action": "nod"}'), "list of action strings"),
        (Scripted(raw="not json"), "not JSON"),
    ],
)
def test_failures_are_answered_with_an_apology(
    server: ScriptedDifyServer, scripted: Scripted, why: str
) -> None:
    hub = EventHub()
    seen: list[Event] = []
    hub.subscribe(seen.append, CommandRejected.kind)
    server.push(scripted)
    planner = DifyPlanner(base_url=server.base_url, api_key="k", events=hub)
    try:
        reply = planner.plan("nod")
    finally:
        planner.close()
    hub.drain()
    assert reply.response == APOLOGY
    assert reply.actions == []
    assert reply.error is not None
    assert why in reply.error
    assert len(seen) == 1
    assert isinstance(seen[0], CommandRejected)
    assert seen[0].source == "agent"
    assert seen[0].reason.startswith("dify planner: ")


def test_a_lost_conversation_starts_over(server: ScriptedDifyServer) -> None:
    server.push(
        Scripted.dify(_answer("Hi.", [])),
        Scripted.error(404, "Conversation Not Exists."),
        Scripted.dify(_answer("Hi again.", [])),
    )
    planner = DifyPlanner(base_url=server.base_url, api_key="k")
    try:
        planner.plan("hello")
        lost = planner.plan("still there?")
        assert planner.conversation_id is None
        again = planner.plan("hello?")
    finally:
        planner.close()
    assert lost.response == APOLOGY
    assert again.response == "Hi again."
    assert [r.body["conversation_id"] for r in server.requests] == ["", "conv-1", ""]


def test_timeout_and_interrupt(server: ScriptedDifyServer) -> None:
    server.push(Scripted.dify("late").slow(3.0))
    planner = DifyPlanner(base_url=server.base_url, api_key="k", timeout_s=0.3)
    t0 = time.monotonic()
    reply = planner.plan("hello")
    assert time.monotonic() - t0 < 2.0
    assert reply.response == APOLOGY
    planner.close()

    server.push(Scripted.dify("later").slow(5.0))
    slow = DifyPlanner(base_url=server.base_url, api_key="k", timeout_s=10)
    replies = []
    asking = threading.Thread(target=lambda: replies.append(slow.plan("hello")))
    asking.start()
    assert server.wait_for_requests(2)
    slow.interrupt()
    asking.join(2)
    server.stop()
    slow.close()
    assert not asking.is_alive()
    assert replies[0].interrupted
    assert slow.conversation_id is None
