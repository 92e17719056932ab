"""The realtime brain against a scripted Realtime server on 127.0.0.1 (anima.testing.
realtime_server): the session it asks for, tool calls run as real actions on a runtime with the
output on the same call_id and one response at a time, refusals told, typed requests, how
build attaches it, and a missing key."""

from __future__ import annotations

import dataclasses
import time

import pytest

from anima import commands as cmd
from anima.agent.realtime import RealtimeAgent, build_realtime_agent
from anima.agent.vocabulary import robot_registry
from anima.config import AgentConfig, AnimaConfig
from anima.config.planner import RealtimePlannerConfig
from anima.errors import ConfigError
from anima.events import MoveStarted
from anima.runtime import Runtime
from anima.testing.events import EventRecorder
from anima.testing.realtime_server import (
    ScriptedRealtimeServer,
    answer,
    function_call,
)

from .conftest import (
    brain,
    outputs,
    quiet_config,
)

pytestmark = pytest.mark.integration


def test_the_session_asks_for_audio_at_24khz_server_vad_the_voice_and_the_tools(
    runtime: Runtime,
) -> None:
    with ScriptedRealtimeServer() as server, brain(runtime, server):
        update = server.wait_for("session.update")[0].event["session"]
    assert server.headers[0]["authorization"] == "Bearer sk-t"
    assert server.paths[0] == "/v1/realtime?model=gpt-realtime"
    assert update["type"] == "realtime"
    assert update["model"] == "gpt-realtime"
    assert update["instructions"].startswith("You are a small, friendly social robot")
    pcm = {"type": "audio/pcm", "rate": 24000}
    vad = {"type": "server_vad", "silence_duration_ms": 500}
    # the server reports the voice; anima's duplex rules cancel and ask for responses
    vad |= {"interrupt_response": False, "create_response": False}
    assert update["audio"]["input"] == {
        "format": pcm,
        "turn_detection": vad,
        "transcription": {"model": "gpt-4o-mini-transcribe"},
    }
    assert update["audio"]["output"] == {"format": pcm, "voice": "marin"}
    tools = {t["name"]: t for t in update["tools"]}
    registry = robot_registry(runtime)
    assert set(tools) == {a.name for a in registry} - {"finish"}
    nod = tools["play_animation"]
    assert nod["type"] == "function"
    assert nod["parameters"] == registry["play_animation"].parameters_schema()
    assert "nod" in nod["parameters"]["properties"]["name"]["enum"]


def test_a_tool_call_runs_the_action_and_answers_on_its_call_id_then_asks_a_response(
    runtime: Runtime, recorder: EventRecorder
) -> None:
    call = function_call("play_animation", {"name": "nod"}, call_id="call_nod")
    with (
        ScriptedRealtimeServer({"response.create": [answer(calls=[call])]}) as server,
        brain(runtime, server),
    ):
        runtime.execute(cmd.Ask(text="nod please"))
        first = server.wait_for("conversation.item.create")[0].event["item"]
        assert first["content"] == [{"type": "input_text", "text": "nod please"}]
        recorder.wait_for(lambda e: isinstance(e, MoveStarted) and e.name == "nod")
        creates = server.wait_for("response.create", 2)
        (out,) = outputs(server)
    assert out.event["item"]["call_id"] == "call_nod"
    output = out.event["item"]["output"]
    assert output == "Robot feedback: Execution [\"play_animation(name='nod')\"] completed"
    assert creates[0].t < out.t < creates[1].t  # the output, then the response that reads it


def test_one_response_at_a_time_the_next_waits_for_response_done(runtime: Runtime) -> None:
    look = function_call("look_at", {"x": 1.0, "y": 0.2, "z": 0.0}, call_id="call_look")
    open_response: list[object] = [{"type": "response.created", "response": {"id": "r1"}}, look]
    with (
        ScriptedRealtimeServer({"response.create": [open_response]}) as server,  # type: ignore[list-item]
        brain(runtime, server),
    ):
        runtime.execute(cmd.Ask(text="look left"))
        server.wait_for("response.create")
        deadline = time.monotonic() + 5.0
        while not outputs(server):
            assert time.monotonic() < deadline, "no function_call_output"
            time.sleep(0.01)
        assert outputs(server)[0].event["item"]["output"].startswith("Robot feedback: Execution")
        time.sleep(0.3)  # the call has answered: its response.create waits for response.done
        assert len(server.of("response.create")) == 1
        server.push({"type": "response.done", "response": {"id": "r1", "status": "completed"}})
        second = server.wait_for("response.create", 2)[1]
    done_at = min(t for t, kind in server.sent if kind == "response.done")
    assert second.t > done_at


def test_refused_calls_are_told_to_the_model_and_nothing_moves(
    runtime: Runtime, recorder: EventRecorder
) -> None:
    calls = [
        function_call("play_animation", {"name": "moonwalk"}, call_id="c1"),
        function_call("self_destruct", {}, call_id="c2"),
        function_call("look_at", "{not json", call_id="c3"),
        function_call("finish", {}, call_id="c4"),
    ]
    with (
        ScriptedRealtimeServer({"response.create": [answer(calls=calls)]}) as server,
        brain(runtime, server),
    ):
        mark = recorder.mark()
        runtime.execute(cmd.Ask(text="do things"))
        server.wait_for("response.create", 2)
        got = {r.event["item"]["call_id"]: r.event["item"]["output"] for r in outputs(server)}
    assert got["c1"].startswith("refused: step 1 play_animation:")
    assert "moonwalk" in got["c1"]
    assert got["c2"] == "refused: unknown tool 'self_destruct'"
    assert got["c3"] == "refused: the arguments are not JSON"
    assert got["c4"] == "refused: unknown tool 'finish'"
    assert len(server.of("response.create")) == 2  # one for all four outputs
    assert not recorder.of(MoveStarted, since=mark)


@pytest.mark.parametrize("auth", ["bearer", "none"])
def test_build_attaches_the_realtime_brain_instead_of_the_conversation(
    monkeypatch: pytest.MonkeyPatch, auth: str
) -> None:
    """With a key from the environment, sent as a bearer token; or ``auth: none`` (a local
    speech-to-speech server that asks for no key): no key needed and no header sent."""
    from anima.build import build
    from anima.drivers.sim import SimDriver
    from anima.speech.sinks import NullSink
    from anima.testing.tts import ScriptedEngine

    if auth == "bearer":
        monkeypatch.setenv("OPENAI_API_KEY", "sk-build")
    else:
        monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    lines: list[str] = []
    with ScriptedRealtimeServer() as server:
        planner = RealtimePlannerConfig(
            url=server.url,
            model="gpt-realtime-mini",
            auth=auth,  # type: ignore[arg-type]
        )
        cfg = quiet_config()
        cfg = dataclasses.replace(cfg, agent=AgentConfig(enabled=True, planner=planner))
        runtime = build(
            cfg,
            doors=False,
            audio_in="none",
            driver=SimDriver(),
            tts=[ScriptedEngine()],
            audio_sink=NullSink(),
            report=lines.append,
        )
        assert isinstance(runtime.agent, RealtimeAgent)
        runtime.start()
        try:
            update = server.wait_for("session.update")[0].event["session"]
            assert runtime.state().conversation == "idle"
        finally:
            runtime.stop(ease=False)
    assert update["model"] == "gpt-realtime-mini"
    if auth == "bearer":
        assert server.headers[0]["authorization"] == "Bearer sk-build"
    else:
        assert "authorization" not in server.headers[0]
        assert "api-key" not in server.headers[0]
    assert any("realtime brain at" in line for line in lines)


def test_without_a_key_the_realtime_brain_is_a_one_line_config_error(runtime: Runtime) -> None:
    cfg = AnimaConfig(agent=AgentConfig(planner="openai_realtime"))  # type: ignore[arg-type]
    with pytest.raises(ConfigError) as caught:
        build_realtime_agent(runtime, cfg, environ={}, audio_in="none")
    message = str(caught.value)
    assert "\n" not in message
    assert "set OPENAI_API_KEY" in message
    azure = RealtimePlannerConfig(api_key_env="AZURE_KEY", auth="api-key")
    named = AnimaConfig(agent=AgentConfig(planner=azure))
    with pytest.raises(ConfigError, match="set AZURE_KEY"):
        build_realtime_agent(runtime, named, environ={"OPENAI_API_KEY": "x"}, audio_in="none")


def test_anima_serve_agent_without_the_key_says_so_in_one_line_and_exits_2(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from typer.testing import CliRunner

    from anima.cli import app

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    env = {
        "ANIMA_AGENT__PLANNER": "openai_realtime",
        "ANIMA_MQTT__ENABLED": "false",
        "ANIMA_WEB__ENABLED": "false",
    }
    result = CliRunner().invoke(app, ["serve", "--agent", "--audio-in", "none"], env=env)
    assert result.exit_code == 2, result.output
    lines = [line for line in result.output.splitlines() if line.startswith("error:")]
    assert len(lines) == 1
    assert "openai_realtime needs an API key: set OPENAI_API_KEY" in lines[0]
