"""The OpenAI-compatible planner against a scripted server on 127.0.0.1 (real HTTP, real client)."""

from __future__ import annotations

import json
import socket
import threading
import time

import pytest

from anima.agent.actions import ActionRegistry
from anima.agent.executor import Executor
from anima.agent.plan import parse_plan
from anima.agent.planners import APOLOGY, create_planner
from anima.agent.planners.openai import SUPERSEDED, OpenAIPlanner
from anima.agent.planners.tools import action_string
from anima.agent.vocabulary import builtin_registry
from anima.config import AgentConfig, OpenAIPlannerConfig
from anima.errors import PlannerError
from anima.events import EventHub
from anima.runtime import Runtime
from anima.testing.llm import Scripted, ScriptedOpenAIServer

from .conftest import openai_planner, rejections

pytestmark = pytest.mark.integration

pytest.importorskip("httpx")


def test_tool_calls_become_action_strings(
    server: ScriptedOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TEST_LLM_KEY", "sk-test")
    server.push(
        Scripted.tool_calls(
            ("play_animation", {"name": "nod"}),
            ("say", {"text": "It's nice to meet you"}),
            ("look_at", {"x": 1, "y": -0.5, "z": 0.2}),
            ("stop", {}),
            content="Nice to meet you!",
        )
    )
    cfg = AgentConfig(
        planner=OpenAIPlannerConfig(
            base_url=server.base_url, model="m1", api_key_env="TEST_LLM_KEY"
        )
    )
    planner = create_planner(cfg, builtin_registry(animations=["nod"]))
    try:
        reply = planner.plan("nod and greet me")
    finally:
        planner.close()
    assert reply.response == "Nice to meet you!"
    assert reply.actions == [
        "play_animation(name='nod')",
        'say(text="It\'s nice to meet you")',
        "look_at(x=1, y=-0.5, z=0.2)",
        "stop()",
    ]
    assert reply.error is None
    parse_plan(builtin_registry(animations=["nod"]), reply.actions)  # they validate
    (request,) = server.requests
    assert request.path == "/v1/chat/completions"
    assert request.headers["authorization"] == "Bearer sk-test"
    body = request.body
    assert body["model"] == "m1"
    assert body["tool_choice"] == "auto"
    assert {t["function"]["name"] for t in body["tools"]} == {
        "say",
        "play_animation",
        "look_at",
        "look_at_target",
        "wait",
        "stop",
        "finish",
    }
    nod = next(t for t in body["tools"] if t["function"]["name"] == "play_animation")
    assert nod["function"]["parameters"]["properties"]["name"]["enum"] == ["nod"]
    assert [m["role"] for m in body["messages"]] == ["system", "user"]
    assert body["messages"][1]["content"] == "nod and greet me"
    assert "response_format" not in body
    assert body["max_tokens"] == 512  # agent.max_tokens: a reply is bounded


def test_agent_max_tokens_bounds_every_reply(server: ScriptedOpenAIServer) -> None:
    """A small model in JSON mode wrote until its context was full without it (docs/agent.md)."""
    server.push(Scripted.json_reply("Hi.", []))
    cfg = AgentConfig(
        planner=OpenAIPlannerConfig(base_url=server.base_url, mode="json", max_tokens=64)
    )
    planner = create_planner(cfg, builtin_registry())
    try:
        assert planner.plan("hello").response == "Hi."
    finally:
        planner.close()
    (request,) = server.requests
    assert request.body["max_tokens"] == 64


def test_feedback_answers_each_tool_call_and_keeps_the_conversation(
    server: ScriptedOpenAIServer,
) -> None:
    server.push(
        Scripted.tool_calls(("play_animation", {"name": "nod"}), ("wait", {"seconds": 1})),
        Scripted.content("Done nodding."),
        Scripted.content("Hello again."),
    )
    planner = openai_planner(server)
    try:
        first = planner.plan("nod then wait")
        summary = "Robot feedback: Execution [\"play_animation(name='nod')\"] completed"
        follow = planner.feedback(summary)
        again = planner.plan("hello")
    finally:
        planner.close()
    assert first.actions == ["play_animation(name='nod')", "wait(seconds=1)"]
    assert follow is not None
    assert follow.response == "Done nodding."
    assert follow.actions == []
    assert again.response == "Hello again."
    second = server.requests[1].body["messages"]
    assert [m["role"] for m in second] == ["system", "user", "assistant", "tool", "tool"]
    assert [m["tool_call_id"] for m in second[3:]] == ["call_0", "call_1"]
    assert all(m["content"] == summary for m in second[3:])
    assert second[2]["tool_calls"][0]["function"]["name"] == "play_animation"
    third = server.requests[2].body["messages"]
    assert [m["role"] for m in third] == [
        "system",
        "user",
        "assistant",
        "tool",
        "tool",
        "assistant",
        "user",
    ]
    planner.reset()
    assert planner.history == []


def test_a_new_request_closes_unanswered_tool_calls(server: ScriptedOpenAIServer) -> None:
    server.push(Scripted.tool_calls(("wait", {"seconds": 5})), Scripted.content("OK."))
    planner = openai_planner(server)
    try:
        planner.plan("wait")
        planner.plan("never mind")  # the plan was interrupted: no feedback was sent
    finally:
        planner.close()
    messages = server.requests[1].body["messages"]
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "tool", "user"]
    assert messages[3] == {"role": "tool", "tool_call_id": "call_0", "content": SUPERSEDED}


def test_json_mode_reads_the_seed_reply(server: ScriptedOpenAIServer) -> None:
    server.push(
        Scripted.json_reply("Watch this.", ["play_animation('nod')"], plan="nod, then rest"),
        Scripted.content('```json\n{"response": "Bye.", "action": ["finish()"]}\n```'),
    )
    planner = openai_planner(server, mode="json")
    try:
        reply = planner.plan("nod")
        bye = planner.feedback(
            "Robot feedback: Execution [\"play_animation(name='nod')\"] completed"
        )
    finally:
        planner.close()
    assert reply.response == "Watch this."
    assert reply.actions == ["play_animation('nod')"]
    assert reply.plan == "nod, then rest"
    assert bye is not None
    assert bye.actions == ["finish()"]  # the seed's "action" key
    body = server.requests[0].body
    assert body["response_format"] == {"type": "json_object"}
    assert "tools" not in body
    system = body["messages"][0]["content"]
    assert "play_animation(name: Literal['nod', 'LOOKUP_Waving'])" in system
    assert '"response"' in system
    feedback = server.requests[1].body["messages"]
    assert feedback[-1] == {
        "role": "user",
        "content": "Robot feedback: Execution [\"play_animation(name='nod')\"] completed",
    }


@pytest.mark.parametrize(
    ("scripted", "mode", "why"),
    [
        (Scripted.error(500, "model crashed"), "tools", "HTTP 500 from"),
        (Scripted.error(401, "bad key"), "tools", "HTTP 401"),
        (Scripted(raw="<html>oops</html>"), "tools", "not JSON"),
        (Scripted(body={"choices": []}), "tools", "no choices[0].message"),
        (Scripted(body={"choices": [{"message": "hi"}]}), "tools", "not an object"),
        (Scripted.content("I will nod now."), "json", "no JSON object"),
        (Scripted.content('{"response": "x", "actions": "nod"}'), "json", "list of action"),
        (Scripted.content('{"response": 3}'), "json", "'response' must be a string"),
        (Scripted.content("[1, 2]"), "json", "no JSON object"),
        (Scripted.content('{"response": "x", "actions": [1]}'), "json", "list of action"),
        (Scripted.content('{"response": "x",}'), "json", "invalid JSON"),
        (
            Scripted(
                body={
                    "choices": [
                        {
                            "message": {
                                "content": "",
                                "tool_calls": [
                                    {"id": "a", "function": {"name": "say", "arguments": "{x"}}
                                ],
                            }
                        }
                    ]
                }
            ),
            "tools",
            "not JSON",
        ),
        (Scripted.tool_calls(("os.system", {"c": "x"})), "tools", "names 'os.system'"),
        (Scripted.tool_calls(("say", {"text": {"a": 1}})), "tools", "not a plain value"),
        (Scripted.tool_calls(("say", {"te xt": "a"})), "tools", "an argument named"),
    ],
)
def test_failures_are_answered_with_an_apology_and_an_error_event(
    server: ScriptedOpenAIServer, hub: EventHub, scripted: Scripted, mode: str, why: str
) -> None:
    server.push(scripted)
    planner = openai_planner(server, hub, mode=mode)
    try:
        reply = planner.plan("nod")
        history = planner.history
    finally:
        planner.close()
    assert reply.response == APOLOGY
    assert reply.actions == []
    assert reply.error is not None
    assert why in reply.error
    assert history == []  # the failed exchange is not kept
    (event,) = rejections(hub)
    assert event.source == "agent"
    assert event.command == "plan"
    assert event.argument == "nod"
    assert why in event.reason
    assert event.reason.startswith("openai planner: ")


def test_a_timeout_is_answered_with_an_apology(server: ScriptedOpenAIServer, hub: EventHub) -> None:
    server.push(Scripted.content("too late").slow(3.0))
    planner = openai_planner(server, hub, timeout_s=0.3)
    t0 = time.monotonic()
    try:
        reply = planner.plan("nod")
    finally:
        planner.close()
    assert time.monotonic() - t0 < 2.0
    assert reply.response == APOLOGY
    assert reply.actions == []
    assert reply.error is not None
    assert "within the timeout" in reply.error
    assert len(rejections(hub)) == 1


def test_an_unreachable_server_is_answered_with_an_apology(hub: EventHub) -> None:
    # a port held bound but not listening: connecting is refused, and no other test's server
    # can take it meanwhile (a port freed by a stopped server was, once: a 404 from a stranger)
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{held.getsockname()[1]}/v1"
        planner = OpenAIPlanner(
            builtin_registry(), base_url=url, model="m", events=hub, timeout_s=2
        )
        try:
            reply = planner.plan("nod")
        finally:
            planner.close()
    assert reply.response == APOLOGY
    assert reply.error is not None
    assert "request to" in reply.error
    assert len(rejections(hub)) == 1


def test_a_slow_reply_is_released_by_interrupt(server: ScriptedOpenAIServer) -> None:
    server.push(Scripted.tool_calls(("play_animation", {"name": "nod"})).slow(5.0))
    planner = openai_planner(server, timeout_s=10)
    replies = []
    asking = threading.Thread(target=lambda: replies.append(planner.plan("nod")))
    asking.start()
    assert server.wait_for_requests(1)
    t0 = time.monotonic()
    planner.interrupt()
    asking.join(2)
    try:
        assert not asking.is_alive()
        assert time.monotonic() - t0 < 1.5  # the reply would take 5 s
        (reply,) = replies
        assert reply.interrupted
        assert reply.actions == []
        assert reply.response == ""
        assert planner.history == []
    finally:
        server.stop()  # wakes the delayed reply so close() joins its thread at once
        planner.close()


def test_history_is_trimmed_at_a_user_message(server: ScriptedOpenAIServer) -> None:
    for i in range(6):
        server.push(Scripted.content(f"answer {i}"))
    planner = openai_planner(server, max_history=4)
    try:
        for i in range(6):
            planner.plan(f"question {i}")
    finally:
        planner.close()
    history = planner.history
    assert len(history) == 4
    assert history[0] == {"role": "user", "content": "question 4"}


def test_action_string_refuses_what_a_plan_cannot_carry() -> None:
    assert action_string("look_at", {"x": 1.5, "y": -2, "z": 0}) == "look_at(x=1.5, y=-2, z=0)"
    assert action_string("tag", {"names": ["a", "b"]}) == "tag(names=['a', 'b'])"
    with pytest.raises(PlannerError):
        action_string("say", {"text": [["nested"]]})
    with pytest.raises(PlannerError):
        action_string("say", {"text)": "x"})


def test_tool_calls_to_a_moving_robot_and_feedback(
    server: ScriptedOpenAIServer, runtime: Runtime, registry: ActionRegistry
) -> None:
    server.push(
        Scripted.tool_calls(("play_animation", {"name": "nod"}), content="Yes!"),
        Scripted.content("I nodded."),
    )
    planner = OpenAIPlanner(registry, base_url=server.base_url, model="m")
    try:
        reply = planner.plan("can you nod?")
        result = Executor(runtime).run(parse_plan(registry, reply.actions), timeout=10)
        assert result.feedback is not None
        follow = planner.feedback(result.feedback)
    finally:
        planner.close()
    assert result.outcome == "succeeded"
    assert follow is not None
    assert follow.response == "I nodded."
    tool = server.requests[1].body["messages"][-1]
    assert tool["role"] == "tool"
    assert json.dumps(tool["content"]).startswith('"Robot feedback: Execution')


# ---------------------------------------------------------------------- streaming (issue 13)
class Sink:
    """A ReplySink that records what came, in order."""

    def __init__(self) -> None:
        self.got: list[tuple[str, object]] = []

    def actions(self, actions: list[str]) -> None:
        self.got.append(("actions", actions))

    def words(self, text: str) -> None:
        self.got.append(("words", text))


def test_a_streamed_tool_reply_hands_words_on_then_the_whole_plan(
    server: ScriptedOpenAIServer,
) -> None:
    server.push(
        Scripted.stream_tools(
            ("play_animation", {"name": "nod"}),
            ("play_animation", {"name": "wave"}),  # the friendly name of LOOKUP_Waving
            content=["Sure. ", "Nodding", " and waving."],
        )
    )
    sink = Sink()
    reply = openai_planner(server).plan("nod and wave", sink)
    assert reply.streamed
    plan = ["play_animation(name='nod')", "play_animation(name='LOOKUP_Waving')"]
    assert reply.actions == plan
    assert sink.got == [("words", "Sure."), ("actions", plan), ("words", "Nodding and waving.")]
    assert server.requests[0].body["stream"] is True
    parse_plan(builtin_registry(animations=["nod", "LOOKUP_Waving"]), reply.actions)


@pytest.mark.parametrize("actions_first", [True, False])
def test_a_streamed_json_reply_hands_the_plan_on_as_soon_as_it_is_whole(
    server: ScriptedOpenAIServer, actions_first: bool
) -> None:
    server.push(
        Scripted.stream_json(
            'Okay! I\'ll nod, "twice". Done',
            ["play_animation('wave')"],
            pieces=30,
            actions_first=actions_first,
        )
    )
    sink = Sink()
    reply = openai_planner(server, mode="json").plan("nod", sink)
    plan = ["play_animation(name='LOOKUP_Waving')"]  # the friendly name mapped back
    assert reply.actions == plan
    words = [w for kind, w in sink.got if kind == "words"]
    assert words == ["Okay!", 'I\'ll nod, "twice".', "Done"]
    where = sink.got.index(("actions", plan))
    assert where == (0 if actions_first else 2)  # the tail "Done" waits for the end either way


def test_a_server_that_does_not_stream_is_read_whole(server: ScriptedOpenAIServer) -> None:
    server.push(Scripted.tool_calls(("play_animation", {"name": "nod"}), content="Sure."))
    sink = Sink()
    reply = openai_planner(server).plan("nod", sink)
    assert not reply.streamed  # the caller takes it whole
    assert reply.actions == ["play_animation(name='nod')"]
    assert sink.got == []


def test_friendly_tools_offer_short_names_and_directions(server: ScriptedOpenAIServer) -> None:
    server.push(
        Scripted.tool_calls(("look_at", {"direction": "left"}), ("look_at", {"direction": "up"}))
    )
    planner = openai_planner(server)
    reply = planner.plan("look left then up")
    assert reply.actions == ["look_at(x=1.0, y=0.6, z=0.0)", "look_at(x=1.0, y=0.0, z=0.5)"]
    tools = {t["function"]["name"]: t["function"] for t in server.requests[0].body["tools"]}
    assert "wave" in tools["play_animation"]["parameters"]["properties"]["name"]["enum"]
    assert "left" in tools["look_at"]["parameters"]["properties"]["direction"]["enum"]
    assert len(json.dumps(list(tools.values()))) < len(json.dumps(planner.registry.tools()))


def test_acknowledge_answers_the_tool_calls_without_a_request(
    server: ScriptedOpenAIServer,
) -> None:
    server.push(
        Scripted.tool_calls(("play_animation", {"name": "nod"})), Scripted.content("Hello!")
    )
    planner = openai_planner(server)
    planner.plan("nod")
    planner.acknowledge("Robot feedback: Execution ['play_animation(name='nod')'] completed")
    assert len(server.requests) == 1
    planner.plan("hello")
    messages = server.requests[1].body["messages"]
    assert [m["role"] for m in messages[1:]] == ["user", "assistant", "tool", "user"]
    assert messages[3]["content"].startswith("Robot feedback: Execution")


def test_a_retracted_request_leaves_no_trace_in_the_next_prompt(
    server: ScriptedOpenAIServer,
) -> None:
    """A reply begun early and taken back (the person went on, docs/listening.md): the next
    request is sent as if the retracted one had never been asked."""
    server.push(
        Scripted.content("Hello!"),
        Scripted.tool_calls(("play_animation", {"name": "LOOKUP_Waving"})),
        Scripted.content("Waving at the children."),
    )
    planner = openai_planner(server)
    try:
        planner.plan("say hello")
        planner.plan("wave")  # the pause after "wave": planned early …
        planner.retract()  # … and taken back: "wave at the children" was the request
        planner.plan("wave at the children")
    finally:
        planner.close()
    last = server.requests[2].body["messages"]
    assert [(m["role"], m.get("content")) for m in last[1:]] == [
        ("user", "say hello"),
        ("assistant", "Hello!"),
        ("user", "wave at the children"),
    ]  # no "wave", no tool call left open for it
