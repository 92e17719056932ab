"""The realtime brain against a scripted Realtime server on 127.0.0.1 (anima.testing.
realtime_server): the session it asks for, tool calls run as real actions on a runtime with the
output on the same call_id and one response at a time, typed requests, and servers that
misbehave (unreadable, unknown and huge messages, a dropped socket, a stall, session.closed),
after which the runtime still runs and the client has reconnected."""

from __future__ import annotations

import base64
import contextlib
import dataclasses
import logging
import time
from collections.abc import Iterator

import numpy as np
import pytest

from anima import commands as cmd
from anima.agent.realtime import RealtimeAgent, build_realtime_agent
from anima.agent.realtime.agent import LOST_LINE
from anima.agent.vocabulary import robot_registry
from anima.config import AgentConfig, AnimaConfig
from anima.config.planner import RealtimePlannerConfig
from anima.errors import ConfigError
from anima.events import ConversationChanged, MoveStarted, SpeechEnded, SpeechStarted
from anima.listening.sources import AudioSource, PushSource
from anima.runtime import Runtime
from anima.testing.events import EventRecorder
from anima.testing.realtime_server import (
    Drop,
    Raw,
    Received,
    ScriptedRealtimeServer,
    answer,
    audio_delta,
    function_call,
    huge_delta,
)

pytestmark = pytest.mark.integration


def quiet_config() -> AnimaConfig:
    from anima.config import BlinkConfig, BreathingConfig, MotionConfig, MqttConfig

    motion = MotionConfig(
        breathing=BreathingConfig(enabled=False), blink=BlinkConfig(enabled=False)
    )
    return AnimaConfig(mqtt=MqttConfig(enabled=False), motion=motion)


def settings(server: ScriptedRealtimeServer, **kw: float) -> RealtimePlannerConfig:
    kw.setdefault("reconnect_s", 0.05)
    kw.setdefault("reconnect_max_s", 0.2)
    return RealtimePlannerConfig(url=server.url, **kw)  # type: ignore[arg-type]


@contextlib.contextmanager
def brain(
    runtime: Runtime,
    server: ScriptedRealtimeServer,
    source: AudioSource | None = None,
    **kw: float,
) -> Iterator[RealtimeAgent]:
    """The realtime agent on ``runtime`` (attached, so started), connected to ``server``,
    hearing ``source`` (none by default)."""
    agent = RealtimeAgent(
        runtime,
        robot_registry(runtime),
        settings(server, **kw),
        runtime.config.agent,
        key="sk-t",
        source=source,
    )
    runtime.attach_agent(agent)
    try:
        server.wait_for("session.update")
        yield agent
    finally:
        runtime.detach_agent()


def outputs(server: ScriptedRealtimeServer) -> list[Received]:
    return [
        r
        for r in server.of("conversation.item.create")
        if r.event["item"]["type"] == "function_call_output"
    ]


def still_running(runtime: Runtime) -> None:
    """The loop ticks and execute answers."""
    ticks = runtime.engine.stats().ticks
    assert runtime.execute(cmd.PlayAnimation(name="nod")) is not None
    deadline = time.monotonic() + 5.0
    while runtime.engine.stats().ticks <= ticks + 5:
        assert time.monotonic() < deadline, "the loop stopped ticking"
        time.sleep(0.01)


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
    assert update["audio"]["input"] == {"format": pcm, "turn_detection": {"type": "server_vad"}}
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


def test_hostile_messages_are_skipped_and_the_session_goes_on(
    runtime: Runtime, caplog: pytest.LogCaptureFixture
) -> None:
    hostile: list[object] = [
        {"type": "session.updated"},
        Raw('{"type": "response.cre'),  # truncated
        Raw(b"\xff\xfe\x00binary"),
        Raw("[1, 2, 3]"),
        {"type": "response.future_thing", "x": 1},
        {"type": "response.future_thing", "x": 2},
        {"no": "type"},
        function_call("look_at", {"x": 1.0, "y": 0.0, "z": 0.0}, call_id="after"),
    ]
    caplog.set_level(logging.INFO, logger="anima.agent.realtime")
    with (
        ScriptedRealtimeServer({"session.update": [hostile]}) as server,  # type: ignore[list-item]
        brain(runtime, server) as agent,
    ):
        server.wait_for("response.create")  # the call after them all was answered
        (out,) = outputs(server)
        assert out.event["item"]["call_id"] == "after"
        assert agent.connection.opened == 1  # no reconnect was needed
        assert agent.connection.skipped == 4  # truncated, binary, a list, no type
        still_running(runtime)
    unknown = [r for r in caplog.records if "response.future_thing" in r.getMessage()]
    assert len(unknown) == 1  # logged once per type


def test_a_dropped_socket_is_reconnected_and_the_robot_says_it_lost_it(
    runtime: Runtime, recorder: EventRecorder
) -> None:
    with (
        ScriptedRealtimeServer({"session.update": [[Drop()]]}) as server,
        brain(runtime, server) as agent,
    ):
        server.wait_for("session.update", 2)  # a new session on a new socket
        assert len(server.headers) == 2
        said = recorder.wait_for(SpeechStarted)
        assert said.text == LOST_LINE
        runtime.execute(cmd.Ask(text="are you back?"))
        asked = server.wait_for("conversation.item.create")[0]
        assert asked.connection == 2
        assert agent.connected
        still_running(runtime)
    assert len(recorder.of(lambda e: isinstance(e, SpeechStarted) and e.text == LOST_LINE)) == 1


def test_a_10_mb_delta_is_never_read_the_socket_is_closed_and_opened_again(
    runtime: Runtime, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="anima.agent.realtime")
    with (
        ScriptedRealtimeServer({"session.update": [[huge_delta(10.0)]]}) as server,
        brain(runtime, server) as agent,
    ):
        server.wait_for("session.update", 2)
        assert agent.connection.skipped == 0  # refused at its header, never parsed
        still_running(runtime)
    assert any("1009" in r.getMessage() for r in caplog.records)  # message too big


def test_session_closed_reconnects(runtime: Runtime) -> None:
    with ScriptedRealtimeServer() as server, brain(runtime, server):
        server.push({"type": "session.closed", "reason": "idle"})
        server.wait_for("session.update", 2)


def test_a_stalled_response_is_ended_and_the_next_one_can_start(runtime: Runtime) -> None:
    stalled: list[object] = [{"type": "response.created", "response": {"id": "r1"}}]
    with (
        ScriptedRealtimeServer({"response.create": [stalled]}) as server,  # type: ignore[list-item]
        brain(runtime, server, stall_s=0.3) as agent,
    ):
        runtime.execute(cmd.Ask(text="hello"))
        server.wait_for("response.create")
        deadline = time.monotonic() + 3.0
        while agent.session.response_active:
            assert time.monotonic() < deadline, "the stalled response was never ended"
            time.sleep(0.02)
        runtime.execute(cmd.Ask(text="hello again"))
        server.wait_for("response.create", 2)
        still_running(runtime)


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


def tone(seconds: float, hz: float = 220.0) -> bytes:
    """24 kHz PCM16 of a tone (the model's voice)."""
    t = np.arange(int(24_000 * seconds)) / 24_000
    return (6000 * np.sin(2 * np.pi * hz * t)).astype("<i2").tobytes()


def test_the_models_audio_plays_as_one_utterance_of_the_speech_service(
    real_time_runtime: Runtime,
) -> None:
    rt = real_time_runtime
    rec = EventRecorder().attach(rt.events)
    reply = answer(audio=tone(0.3), transcript="Hello there.", item_id="item_hi")
    with ScriptedRealtimeServer({"response.create": [reply]}) as server, brain(rt, server):
        rt.execute(cmd.Ask(text="say hi"))
        started = rec.wait_for(SpeechStarted)
        ended = rec.wait_for(SpeechEnded)
        assert not server.of("conversation.item.truncate")  # nobody talked over it
    assert ended.utterance == started.utterance
    assert ended.reason == "done"
    assert 0.25 <= ended.t - started.t <= 1.0  # the 0.3 s it lasts, played on the real clock
    phases = [e.state for e in rec.of(ConversationChanged)]
    assert "speaking" in phases


def test_barge_in_cancels_the_response_and_truncates_at_exactly_what_was_played(
    real_time_runtime: Runtime,
) -> None:
    rt = real_time_runtime
    rec = EventRecorder().attach(rt.events)
    reply = answer(audio=tone(3.0), item_id="item_long")
    open_response = reply[:-1]  # no response.done: the model is still answering
    with (
        ScriptedRealtimeServer({"response.create": [open_response]}) as server,
        brain(rt, server) as agent,
    ):
        rt.execute(cmd.Ask(text="tell me a story"))
        started = rec.wait_for(SpeechStarted)
        time.sleep(0.4)
        server.push({"type": "input_audio_buffer.speech_started", "audio_start_ms": 1000})
        (truncate,) = server.wait_for("conversation.item.truncate")
        (cancel,) = server.wait_for("response.cancel")
        ended = rec.wait_for(SpeechEnded)
        # a delta of the cut item already on its way stays silent
        server.push(answer(audio=tone(0.2), item_id="item_long")[1])
        rec.none_for(SpeechStarted, 0.2, since=rec.mark())
        assert rt.state().conversation in ("interrupted", "listening")
    (item, played) = agent.session.truncations[0]
    assert truncate.event == {
        "type": "conversation.item.truncate",
        "item_id": "item_long",
        "content_index": 0,
        "audio_end_ms": played,  # exactly what the stream's stop() returned
    }
    assert item == "item_long"
    assert cancel.t <= truncate.t
    assert ended.reason == "interrupted"
    heard_s = ended.t - started.t
    assert 0.3 <= played / 1000 <= 1.5
    assert abs(played / 1000 - heard_s) <= 0.1  # the sink's count against the clock's


def test_the_microphone_is_resampled_to_24khz_and_appended(runtime: Runtime) -> None:
    source = PushSource()
    with ScriptedRealtimeServer() as server, brain(runtime, server, source) as agent:
        t = np.arange(16_000) / 16_000
        tone = (8000 * np.sin(2 * np.pi * 440 * t)).astype(np.int16)
        source.push(tone)  # 1 s at 16 kHz: 31 whole frames of 512
        appends = server.wait_for("input_audio_buffer.append", 31)
    pcm = b"".join(base64.b64decode(r.event["audio"]) for r in appends)
    got = np.frombuffer(pcm, dtype="<i2")
    sent = 31 * 512
    # 24 kHz: 1.5 × the samples, less the resampler's lag (16 input samples: 24 out, +1 rounding)
    assert 0 <= sent * 3 // 2 - len(got) <= 25
    spectrum = np.abs(np.fft.rfft(got.astype(np.float64)))
    assert abs(np.argmax(spectrum) * 24_000 / len(got) - 440) < 3  # the same tone
    assert agent.microphone.sent == 31


def test_build_attaches_the_realtime_brain_instead_of_the_conversation(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from anima.build import build
    from anima.drivers.sim import SimDriver
    from anima.speech.sinks import NullSink
    from anima.testing.tts import ScriptedEngine

    monkeypatch.setenv("OPENAI_API_KEY", "sk-build")
    lines: list[str] = []
    with ScriptedRealtimeServer() as server:
        planner = RealtimePlannerConfig(url=server.url, model="gpt-realtime-mini")
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
    assert server.headers[0]["authorization"] == "Bearer sk-build"
    assert any("realtime brain at" in line for line in lines)


def test_the_emergency_stop_cancels_the_response_and_truncates_where_the_voice_was_cut(
    real_time_runtime: Runtime,
) -> None:
    rt = real_time_runtime
    rec = EventRecorder().attach(rt.events)
    open_response = answer(audio=tone(3.0), item_id="item_e")[:-1]
    with (
        ScriptedRealtimeServer({"response.create": [open_response]}) as server,
        brain(rt, server) as agent,
    ):
        rt.execute(cmd.Ask(text="talk"))
        rec.wait_for(SpeechStarted)
        time.sleep(0.3)
        rt.execute(cmd.EmergencyStop())
        (truncate,) = server.wait_for("conversation.item.truncate")
        server.wait_for("response.cancel")
        ended = rec.wait_for(SpeechEnded)
        rt.execute(cmd.ResetEmergencyStop())
    assert ended.reason == "estop"
    played = truncate.event["audio_end_ms"]
    assert agent.session.truncations == [("item_e", played)]
    assert 0.2 <= played / 1000 <= 1.5


def test_without_an_echo_canceller_the_microphone_is_not_sent_while_the_robot_speaks(
    real_time_runtime: Runtime,
) -> None:
    rt = real_time_runtime
    source = PushSource()
    frame = np.zeros(512, dtype=np.int16)
    with ScriptedRealtimeServer() as server, brain(rt, server, source) as agent:
        rt.execute(cmd.Speak(text="I am saying something rather long for this test."))
        deadline = time.monotonic() + 5.0
        while not rt.speaking:
            assert time.monotonic() < deadline
            time.sleep(0.01)
        for _ in range(10):
            source.push(frame)
        assert agent.microphone.gated == 10
        rt.execute(cmd.StopSpeaking())
        while rt.speaking:
            assert time.monotonic() < deadline
            time.sleep(0.01)
        for _ in range(3):
            source.push(frame)
        server.wait_for("input_audio_buffer.append", 3)
    assert agent.microphone.gated == 10
    assert agent.microphone.sent == 3


def test_audio_far_ahead_of_playback_is_refused_once_and_the_session_goes_on(
    real_time_runtime: Runtime, caplog: pytest.LogCaptureFixture
) -> None:
    rt = real_time_runtime
    caplog.set_level(logging.WARNING, logger="anima.agent.realtime")
    block = bytes(2 * 24_000 * 25)  # 25 s of silence a delta: six are past the 120 s that wait
    flood = [audio_delta(block, item_id="item_flood") for _ in range(6)]
    after = function_call("look_at", {"x": 1.0, "y": 0.0, "z": 0.0}, call_id="after")
    with ScriptedRealtimeServer({"session.update": [[*flood, after]]}) as server, brain(rt, server):
        server.wait_for("response.create")  # the call after the flood was answered
        assert outputs(server)[0].event["item"]["call_id"] == "after"
        still_running(rt)
    refused = [r for r in caplog.records if "audio refused" in r.getMessage()]
    assert len(refused) == 1
    assert "at most 120 s may wait" in refused[0].getMessage()
