"""The Gemini Live brain (``agent.planner.type: gemini_live``) against a scripted Live API server
on 127.0.0.1 (anima.testing.gemini_server): the setup it sends, the microphone at 16 kHz, the
model's voice as one utterance, tool calls run on a runtime and answered on their id,
``interrupted``, ``toolCallCancellation``, ``goAway``, hostile servers and a missing key."""

from __future__ import annotations

import base64
import contextlib
import logging
import time
from collections.abc import Callable, Iterator

import numpy as np
import pytest

from anima import commands as cmd
from anima.agent.realtime import RealtimeAgent, build_realtime_agent
from anima.agent.realtime.agent import LOST_LINE
from anima.agent.realtime.connection import redacted
from anima.agent.realtime.gemini_wire import seconds_left
from anima.agent.vocabulary import robot_registry
from anima.config import AgentConfig, AnimaConfig
from anima.config.planner import GeminiLivePlannerConfig
from anima.errors import ConfigError
from anima.events import MoveStarted, PlanFinished, PlanOutcome, SpeechEnded, SpeechStarted
from anima.listening.sources import AudioSource, PushSource
from anima.listening.vad import EnergyVad, Vad
from anima.runtime import Runtime
from anima.testing.events import EventRecorder
from anima.testing.gemini_server import (
    ScriptedGeminiServer,
    cancellation,
    go_away,
    interrupted,
    model_audio,
    model_turn,
    resumption,
    tool_call,
)
from anima.testing.realtime_server import Drop, Raw, Received, huge_delta

from .conftest import still_running, tone

pytestmark = pytest.mark.integration

READY = {"setupComplete": {}}
BARGE_IN_S = 0.8  # listen.barge_in_s's default
NOD = ("play_animation", {"name": "nod"}, "c1")


@contextlib.contextmanager
def gemini(
    runtime: Runtime,
    server: ScriptedGeminiServer,
    source: AudioSource | None = None,
    vad: Vad | None = None,
) -> Iterator[RealtimeAgent]:
    """The Gemini brain on ``runtime`` (attached, so started), its setup sent to ``server``;
    with ``vad``, in full duplex (the microphone echo-cancelled, anima's VAD on it)."""
    settings = GeminiLivePlannerConfig(url=server.url, reconnect_s=0.05, reconnect_max_s=0.2)
    registry = robot_registry(runtime)
    agent = RealtimeAgent(
        runtime,
        registry,
        settings,
        runtime.config.agent,
        key="g-key",
        source=source,
        echo_cancelled=vad is not None,
        barge_in_s=BARGE_IN_S,
        vad=vad,
    )
    runtime.attach_agent(agent)
    try:
        server.wait_for("setup")
        ready(agent)
        yield agent
    finally:
        runtime.detach_agent()


def ready(agent: RealtimeAgent) -> None:
    """Wait (at most 5 s) until the client has read setupComplete."""
    deadline = time.monotonic() + 5.0
    while not getattr(agent.session, "ready", False):
        assert time.monotonic() < deadline, "setupComplete was never read"
        time.sleep(0.005)


def responses(server: ScriptedGeminiServer, count: int = 1) -> list[dict[str, object]]:
    """The first ``count`` function responses the client sent."""
    got: list[Received] = server.wait_for("toolResponse", count)
    return [r.event["toolResponse"]["functionResponses"][0] for r in got]


def test_the_setup_names_the_model_voice_persona_and_the_actions_as_functions(
    runtime: Runtime,
) -> None:
    with ScriptedGeminiServer() as server, gemini(runtime, server) as agent:
        setup = server.wait_for("setup")[0].event["setup"]
    assert server.paths[0].endswith("BidiGenerateContent?key=g-key")
    assert "g-key" not in agent.connection.url  # logs show the URL with its key hidden
    assert setup["model"] == "models/gemini-3.1-flash-live-preview"
    assert setup["generationConfig"] == {
        "responseModalities": ["AUDIO"],
        "speechConfig": {"voiceConfig": {"prebuiltVoiceConfig": {"voiceName": "Puck"}}},
    }
    persona = setup["systemInstruction"]["parts"][0]["text"]
    assert persona.startswith("You are a small, friendly social robot")
    assert setup["outputAudioTranscription"] == {}
    assert setup["inputAudioTranscription"] == {}  # the person's words, for the duplex rules
    assert setup["sessionResumption"] == {}  # nothing to resume yet
    (tool,) = setup["tools"]
    functions = {f["name"]: f for f in tool["functionDeclarations"]}
    registry = robot_registry(runtime)
    assert set(functions) == {a.name for a in registry} - {"finish"}
    nod = functions["play_animation"]
    assert nod["parametersJsonSchema"] == registry["play_animation"].parameters_schema()
    assert "nod" in nod["parametersJsonSchema"]["properties"]["name"]["enum"]


def test_the_microphone_arrives_as_realtime_input_at_16khz_unchanged(runtime: Runtime) -> None:
    source = PushSource()
    with ScriptedGeminiServer() as server, gemini(runtime, server, source) as agent:
        t = np.arange(16_000) / 16_000
        sent = (8000 * np.sin(2 * np.pi * 440 * t)).astype(np.int16)
        source.push(sent)  # 1 s at 16 kHz: 31 whole frames of 512
        inputs = server.wait_for("realtimeInput", 31)
    audio = [r.event["realtimeInput"]["audio"] for r in inputs]
    assert {a["mimeType"] for a in audio} == {"audio/pcm;rate=16000"}
    got = np.frombuffer(b"".join(base64.b64decode(a["data"]) for a in audio), dtype="<i2")
    assert np.array_equal(got, sent[: 31 * 512])  # the same samples: no resampling
    assert agent.microphone.sent == 31


def test_the_models_voice_plays_as_one_utterance_of_the_speech_service(
    real_time_runtime: Runtime,
) -> None:
    rt = real_time_runtime
    rec = EventRecorder().attach(rt.events)
    turn = model_turn(audio=tone(0.3), transcript="Hello there.")
    with ScriptedGeminiServer({"clientContent": [turn]}) as server, gemini(rt, server):
        rt.execute(cmd.Ask(text="say hi"))
        asked = server.wait_for("clientContent")[0].event["clientContent"]
        started = rec.wait_for(SpeechStarted)
        ended = rec.wait_for(SpeechEnded)
    assert asked == {
        "turns": [{"role": "user", "parts": [{"text": "say hi"}]}],
        "turnComplete": True,
    }
    assert ended.utterance == started.utterance
    assert ended.reason == "done"
    assert 0.25 <= ended.t - started.t <= 1.0  # the 0.3 s it lasts, played on the real clock


def test_a_tool_call_nods_the_robot_and_is_answered_on_its_id(runtime: Runtime) -> None:
    rec = EventRecorder().attach(runtime.events)
    with (
        ScriptedGeminiServer({"setup": [[READY, tool_call(NOD)]]}) as server,
        gemini(runtime, server),
    ):
        rec.wait_for(lambda e: isinstance(e, MoveStarted) and e.name == "nod")
        (answer,) = responses(server)
    assert answer["id"] == "c1"
    assert answer["name"] == "play_animation"
    result = answer["response"]["result"]  # type: ignore[index]
    assert result == "Robot feedback: Execution [\"play_animation(name='nod')\"] completed"


def test_interrupted_drops_the_queued_voice(real_time_runtime: Runtime) -> None:
    rt = real_time_runtime
    rec = EventRecorder().attach(rt.events)
    turn = model_turn(audio=tone(3.0), complete=False)  # 3 s queued at once
    with ScriptedGeminiServer({"clientContent": [turn]}) as server, gemini(rt, server) as agent:
        rt.execute(cmd.Ask(text="tell me a story"))
        started = rec.wait_for(SpeechStarted)
        time.sleep(0.3)
        server.push(interrupted())
        ended = rec.wait_for(SpeechEnded, timeout=2.0)
        # the model's next turn (its answer to what the person said) plays again
        server.push(model_audio(tone(0.2)), {"serverContent": {"turnComplete": True}})
        again = rec.wait_for(SpeechStarted, count=2)
        assert agent.session.turn >= 1
    assert ended.reason == "interrupted"
    assert 0.2 <= ended.t - started.t <= 1.0  # cut where it was, not 3 s later
    assert again.utterance != started.utterance


class Person:
    """A voice on the microphone, paced at real time (32 ms a frame), over a quiet room."""

    def __init__(self) -> None:
        self.mic = PushSource()
        rng = np.random.default_rng(0)
        self.quiet = [(30 * rng.standard_normal(512)).astype(np.int16) for _ in range(16)]
        self.loud = (8000 * np.sin(2 * np.pi * 220 * np.arange(512) / 16_000)).astype(np.int16)

    def room(self) -> None:
        for frame in self.quiet:
            self.mic.push(frame)  # the VAD's noise floor

    def talk(self, seconds: float, until: Callable[[], bool] = lambda: False) -> float:
        """Speak for ``seconds`` or until ``until()``; when the voice began (monotonic)."""
        began = time.monotonic()
        for _ in range(round(seconds / 0.032)):
            self.mic.push(self.loud)
            time.sleep(0.032)
            if until():
                break
        return began


def test_a_voice_held_over_a_finished_answer_pauses_it_and_cuts_it_at_barge_in_s(
    real_time_runtime: Runtime,
) -> None:
    """The server sent the whole answer (turnComplete) and sends nothing when the person talks
    over its last seconds: anima's VAD pauses the voice at the onset and its held-voice rule
    cuts it, as with OpenAI."""
    rt = real_time_runtime
    rec = EventRecorder().attach(rt.events)
    person = Person()
    turn = model_turn(audio=tone(4.0))  # 4 s, all of it sent at once, turn complete
    with (
        ScriptedGeminiServer({"clientContent": [turn]}) as server,
        gemini(rt, server, person.mic, EnergyVad()) as agent,
    ):
        person.room()
        rt.execute(cmd.Ask(text="tell me a story"))
        started = rec.wait_for(SpeechStarted)
        time.sleep(0.3)
        duplex = agent.session.duplex
        began = person.talk(2.0, until=lambda: bool(rec.of(SpeechEnded)))
        ended = rec.wait_for(SpeechEnded, timeout=2.0)
        assert duplex.yields == 1
        still_running(rt)
    assert ended.reason == "interrupted"
    assert ended.utterance == started.utterance
    assert BARGE_IN_S - 0.05 <= ended.t - began <= BARGE_IN_S + 0.5
    assert duplex.stops == [f"a voice over the robot for {BARGE_IN_S:g} s"]


def test_a_backchannel_the_server_transcribes_lets_the_answer_play_on(
    real_time_runtime: Runtime,
) -> None:
    rt = real_time_runtime
    rec = EventRecorder().attach(rt.events)
    person = Person()
    turn = model_turn(audio=tone(2.5))
    with (
        ScriptedGeminiServer({"clientContent": [turn]}) as server,
        gemini(rt, server, person.mic, EnergyVad()) as agent,
    ):
        person.room()
        rt.execute(cmd.Ask(text="tell me a story"))
        rec.wait_for(SpeechStarted)
        time.sleep(0.3)
        duplex = agent.session.duplex
        person.talk(0.25)  # "mm-hmm"
        server.push({"serverContent": {"inputTranscription": {"text": "Mm-hmm."}}})
        for frame in person.quiet:
            person.mic.push(frame)
        ended = rec.wait_for(SpeechEnded, timeout=5.0)
    assert ended.reason != "interrupted"  # played out
    assert duplex.yields == 1  # paused,
    assert len(duplex.pauses_s) == 1  # then resumed
    assert duplex.stops == []


def test_the_emergency_stop_cuts_the_voice_and_the_rest_of_that_turn_stays_silent(
    real_time_runtime: Runtime,
) -> None:
    rt = real_time_runtime
    rec = EventRecorder().attach(rt.events)
    turn = model_turn(audio=tone(3.0), complete=False)
    with ScriptedGeminiServer({"clientContent": [turn]}) as server, gemini(rt, server) as agent:
        rt.execute(cmd.Ask(text="talk"))
        started = rec.wait_for(SpeechStarted)
        time.sleep(0.2)
        rt.execute(cmd.EmergencyStop())
        ended = rec.wait_for(SpeechEnded, timeout=2.0)
        rt.execute(cmd.ResetEmergencyStop())
        mark = rec.mark()
        server.push(model_audio(tone(0.2)))  # more of the turn that was cut: silent
        rec.none_for(SpeechStarted, 0.2, since=mark)
        server.push({"serverContent": {"turnComplete": True}}, model_audio(tone(0.2)))
        rec.wait_for(SpeechStarted, since=mark)  # the next turn plays
        assert agent.session.turn == 1
    assert ended.reason == "estop"
    assert ended.t - started.t <= 1.0


def test_a_cancellation_stops_the_running_plan_and_it_is_not_answered(
    real_time_runtime: Runtime,
) -> None:
    rt = real_time_runtime
    rec = EventRecorder().attach(rt.events)
    script = {"setup": [[READY, tool_call(("wait", {"seconds": 30.0}, "long"))]]}
    with ScriptedGeminiServer(script) as server, gemini(rt, server):
        rec.wait_for(lambda e: type(e).__name__ == "PlanStarted")
        t0 = time.monotonic()
        server.push(cancellation("long", "unknown-id"))
        finished = rec.wait_for(PlanFinished, timeout=3.0)
        assert time.monotonic() - t0 < 2.0
        server.push(tool_call(("look_at", {"x": 1.0, "y": 0.0, "z": 0.0}, "look")))
        (answer,) = responses(server)  # the next call still runs and is answered
    assert finished.outcome == PlanOutcome.INTERRUPTED
    assert answer["id"] == "look"  # "long" got no toolResponse


def test_go_away_opens_a_new_session_that_resumes_the_conversation(
    runtime: Runtime, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="anima.agent.realtime")
    rec = EventRecorder().attach(runtime.events)
    first = [READY, resumption("handle-1"), go_away(50)]
    with ScriptedGeminiServer({"setup": [first]}) as server, gemini(runtime, server) as agent:
        second = server.wait_for("setup", 2)[1]
        server.wait_connections(2)
        assert agent.session.go_aways == 1
        runtime.execute(cmd.Ask(text="still there?"))
        assert server.wait_for("clientContent")[0].connection == 2
    assert second.event["setup"]["sessionResumption"] == {"handle": "handle-1"}
    said = [r.getMessage() for r in caplog.records if "goAway" in r.getMessage()]
    assert any("in 50 s: reconnecting now" in line for line in said)
    assert not rec.of(lambda e: isinstance(e, SpeechStarted) and e.text == LOST_LINE)
    assert seconds_left({"timeLeft": "12.5s"}) == 12.5
    assert seconds_left({"timeLeft": "soon"}) is None


def test_hostile_messages_are_skipped_and_the_session_goes_on(
    runtime: Runtime, caplog: pytest.LogCaptureFixture
) -> None:
    hostile: list[object] = [
        READY,
        Raw('{"serverContent": {"modelTu'),  # truncated
        Raw(b"\xff\xfe\x00binary"),
        Raw("[1, 2, 3]"),
        Raw("{}"),
        {"futureThing": {"x": 1}},
        {"futureThing": {"x": 2}},
        {"serverContent": {"modelTurn": {"parts": [{"inlineData": {"mimeType": "image/png"}}]}}},
        {"toolCall": {"functionCalls": "not a list"}},
        tool_call(NOD),
    ]
    caplog.set_level(logging.INFO, logger="anima.agent.realtime")
    with (
        ScriptedGeminiServer({"setup": [hostile]}) as server,  # type: ignore[list-item]
        gemini(runtime, server) as agent,
    ):
        (answer,) = responses(server)  # the call after them all was answered
        assert answer["id"] == "c1"
        assert agent.connection.opened == 1  # no reconnect was needed
        assert agent.connection.skipped == 4  # truncated, binary, a list, an empty object
        still_running(runtime)
    unknown = [r for r in caplog.records if "futureThing" in r.getMessage()]
    assert len(unknown) == 1  # logged once per kind
    assert any("image/png" in r.getMessage() for r in caplog.records)


def test_a_10_mb_message_and_a_dropped_socket_each_bring_a_new_session(
    runtime: Runtime, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="anima.agent.realtime")
    rec = EventRecorder().attach(runtime.events)
    script = {"setup": [[READY, huge_delta(10.0)], [READY, Drop()]]}
    with ScriptedGeminiServer(script) as server, gemini(runtime, server) as agent:  # type: ignore[arg-type]
        server.wait_for("setup", 3)
        assert agent.connection.skipped == 0  # refused at its frame's header, never parsed
        said = rec.wait_for(SpeechStarted)
        runtime.execute(cmd.Ask(text="are you back?"))
        assert server.wait_for("clientContent")[0].connection == 3
        still_running(runtime)
    assert said.text == LOST_LINE
    # said once until it is back: the second socket's setupComplete may come before its drop
    # (then it was back between the two outages: twice) or not (once) — a loaded machine decides
    lost = rec.of(lambda e: isinstance(e, SpeechStarted) and e.text == LOST_LINE)
    assert 1 <= len(lost) <= 2  # never more than once an outage
    assert any("1009" in r.getMessage() for r in caplog.records)  # message too big


def test_without_a_key_the_gemini_brain_is_a_one_line_config_error(runtime: Runtime) -> None:
    cfg = AnimaConfig(agent=AgentConfig(planner="gemini_live"))  # type: ignore[arg-type]
    with pytest.raises(ConfigError) as caught:
        build_realtime_agent(runtime, cfg, environ={"OPENAI_API_KEY": "x"}, audio_in="none")
    message = str(caught.value)
    assert "\n" not in message
    assert "agent.planner.type gemini_live needs an API key: set GEMINI_API_KEY" in message
    assert redacted("wss://h/x?a=1&key=secret&b=2") == "wss://h/x?a=1&key=***&b=2"
