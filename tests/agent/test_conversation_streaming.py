"""The conversation with a streaming LLM planner, on the simulated robot with real speech.

Real parts: the scripted OpenAI-compatible server on 127.0.0.1 streaming server-sent events
with delays (in real time), the runtime's speech service with the scripted TTS engine and a null
sink on the runtime's autojump fake clock (speech lasts no real time), the simulated Adam over
gRPC. Issue 13: the reply was spoken before the plan was validated ("Let me
dance!"), ``stop()`` cut the robot's own "Okay.", failed steps were never told, and a
low-confidence transcript was acted on.
"""

from __future__ import annotations

import time
from collections.abc import Iterator

import numpy as np
import pytest

from anima import commands as cmd
from anima.agent.conversation import NOT_CAUGHT, Conversation
from anima.agent.executor import Executor
from anima.agent.planners.openai import OpenAIPlanner
from anima.agent.planners.rules import RulePlanner
from anima.agent.vocabulary import robot_registry
from anima.events import PlanStarted, SpeechEnded, SpeechStarted, Transcript
from anima.runtime import Runtime
from anima.speech.sinks import NullSink
from anima.testing import FakeClock, eventually
from anima.testing.llm import Scripted, ScriptedOpenAIServer

from .conftest import Ears, Recorder, autojump_runtime, fake_clock

pytestmark = pytest.mark.integration


class FirstAudio(NullSink):
    """A null sink on the runtime's clock that notes when (in real time: the server streams in
    real time) audio was written (the robot's first sound)."""

    def __init__(self, clock: FakeClock) -> None:
        super().__init__(clock)
        self.writes: list[float] = []

    def write(self, samples: object) -> None:
        self.writes.append(time.monotonic())
        super().write(samples)  # type: ignore[arg-type]


@pytest.fixture
def runtime() -> Iterator[Runtime]:
    """The runtime on autojump fake time, its sink a :class:`FirstAudio`."""
    clock = FakeClock(autojump=True)
    with autojump_runtime(clock=clock, audio_sink=FirstAudio(clock)) as rt:
        yield rt


@pytest.fixture
def sink(runtime: Runtime) -> FirstAudio:
    assert runtime.speech is not None
    audio = runtime.speech.sink
    assert isinstance(audio, FirstAudio)
    return audio


def _conversation(
    runtime: Runtime, server: ScriptedOpenAIServer, mode: str = "tools", **kw: object
) -> Conversation:
    registry = robot_registry(runtime)
    planner = OpenAIPlanner(registry, base_url=server.base_url, model="test", mode=mode)
    conv = Conversation(runtime, registry, planner, Executor(runtime), **kw)  # type: ignore[arg-type]
    runtime.attach_agent(conv)  # started: the runtime runs
    return conv


def _ask(conv: Conversation, text: str, confidence: float | None = None) -> None:
    conv.hear(Transcript(t=0.0, text=text, final=True, confidence=confidence))


def _said(recorder: Recorder) -> list[str]:
    return [e.text for e in recorder.of("start_speak") if isinstance(e, SpeechStarted)]


def _sent_at(server: ScriptedOpenAIServer, piece: str) -> float:
    for t, data in server.sent:
        if isinstance(data, dict) and piece in str(data["choices"][0]["delta"].get("content")):
            return t
    raise AssertionError(f"{piece!r} was never sent")


# ---------------------------------------------------------------------- item 5: streaming
def test_chit_chat_speaks_its_first_sentence_while_the_rest_arrives(
    runtime: Runtime, recorder: Recorder, server: ScriptedOpenAIServer, sink: FirstAudio
) -> None:
    server.push(
        Scripted.stream_text(
            "Hello", " there! ", "I am well", ", thank you. ", "And you?", gap_s=0.6
        )
    )
    conv = _conversation(runtime, server)
    try:
        _ask(conv, "how are you?")
        first = recorder.wait_for(lambda e: isinstance(e, SpeechStarted), timeout=10)
        assert isinstance(first, SpeechStarted)
        assert first.text == "Hello there!"
        assert eventually(lambda: sink.writes, timeout=5)
        sentence_done = _sent_at(server, " there! ")
        # spoken while the rest was still on its way (the last piece comes 1.8 s later)
        assert len(server.sent) < 6
        assert sink.writes[0] - sentence_done < 1.0  # measured ~10-60 ms; loose for load
        assert eventually(lambda: len(_said(recorder)) == 3, timeout=10)
        assert _said(recorder) == ["Hello there!", "I am well, thank you.", "And you?"]
        assert recorder.of("plan_started") == []
    finally:
        conv.stop()
    assert server.requests[0].body["stream"] is True


def test_json_replies_put_the_plan_first_and_it_runs_before_the_words(
    runtime: Runtime, recorder: Recorder, server: ScriptedOpenAIServer
) -> None:
    server.push(
        Scripted.stream_json(
            "Sure, I'll nod. Watch this.", ["play_animation(name='nod')"], gap_s=0.1
        )
    )
    conv = _conversation(runtime, server, mode="json")
    try:
        _ask(conv, "nod please")
        assert eventually(lambda: len(_said(recorder)) == 2, timeout=10)
        kinds = [e.kind for e in recorder.events if e.kind in ("plan_started", "start_speak")]
        assert kinds[0] == "plan_started"  # validated and started before the first word
        assert _said(recorder) == ["Sure, I'll nod.", "Watch this."]
    finally:
        conv.stop()
    assert '"actions"' in server.requests[0].body["messages"][0]["content"].split('"response"')[0]


# ---------------------------------------------------------------------- defect: reply before plan
@pytest.mark.parametrize("mode", ["tools", "json"])
def test_words_of_a_refused_plan_are_never_said(
    runtime: Runtime, recorder: Recorder, server: ScriptedOpenAIServer, mode: str
) -> None:
    """'Let me dance!' was spoken, then the plan was rejected: now the words wait for the plan
    (text before the tool calls, or a response the model put before its actions)."""
    if mode == "tools":
        first = Scripted.stream_tools(
            ("play_animation", {"name": "dance"}),
            content=["Let me dance! ", "Here goes."],
            gap_s=0.05,
        )
    else:
        first = Scripted.stream_json(
            "Let me dance! Here goes.", ["play_animation(name='dance')"], actions_first=False
        )
    sorry = "I can't dance, but I can wave."
    server.push(
        first, Scripted.stream_text(sorry) if mode == "tools" else Scripted.stream_json(sorry)
    )
    conv = _conversation(runtime, server, mode=mode)
    try:
        _ask(conv, "dance for me")
        assert eventually(lambda: len(_said(recorder)) == 2, timeout=10)
        said = _said(recorder)
        assert said[0].startswith("Sorry, I can't do that")
        assert said[1] == "I can't dance, but I can wave."
        assert not any("dance!" in s or "Here goes" in s for s in said)
        assert recorder.of("plan_started") == []
    finally:
        conv.stop()


# ---------------------------------------------------------------------- defect: stop() cuts "Okay."
@pytest.mark.parametrize("streamed", [False, True])
def test_stop_stops_what_went_on_before_not_the_robots_own_reply(
    runtime: Runtime, recorder: Recorder, server: ScriptedOpenAIServer, streamed: bool
) -> None:
    reply = (
        Scripted.stream_tools(("stop", {}), content=["Okay."])
        if streamed
        else Scripted.tool_calls(("stop", {}), content="Okay.")
    )
    server.push(reply)
    conv = _conversation(runtime, server)
    assert runtime.speech is not None
    try:
        # the story must still be playing when the plan's stop comes: no fake time passes while
        # the model's answer is on its way (real time)
        with fake_clock(runtime).hold():
            before = runtime.speech.speak("This is a long story that goes on and on and on.")
            _ask(conv, "stop")
            recorder.wait_for(
                lambda e: isinstance(e, SpeechEnded) and e.utterance == before, timeout=10
            )
        okay = recorder.wait_for(lambda e: isinstance(e, SpeechStarted) and e.text == "Okay.")
        assert isinstance(okay, SpeechStarted)
        ends = {}
        for utterance in (before, okay.utterance):
            end = recorder.wait_for(
                lambda e, u=utterance: isinstance(e, SpeechEnded) and e.utterance == u, 10
            )
            assert isinstance(end, SpeechEnded)
            ends[utterance] = end.reason
        assert ends[before] == "stopped"  # what was going on before the plan
        assert ends[okay.utterance] == "done"  # the plan's own words are heard whole
    finally:
        conv.stop()


# ---------------------------------------------------------------------- defect: failures untold
@pytest.mark.parametrize("streamed", [False, True])
def test_a_failed_step_is_told_once_per_turn(
    runtime: Runtime, recorder: Recorder, server: ScriptedOpenAIServer, streamed: bool
) -> None:
    """The simulated Adam in emergency stop (drive errors latched): walking fails, and the
    person hears why once, however often the model tries again."""
    pytest.importorskip("grpc")
    from anima.humanoid.client import AdamClient
    from anima.humanoid.server import AdamServer

    adam = AdamServer(port=0)
    port = adam.start()
    client = AdamClient("127.0.0.1", port).connect()
    try:
        client.set_mode("Start")
        client.set_mode("Stop")  # the robot's own emergency stop: drive errors latched
        registry = robot_registry(runtime, humanoid=client)
        planner = OpenAIPlanner(registry, base_url=server.base_url, model="test")
        conv = Conversation(runtime, registry, planner, Executor(runtime))
        conv.start()
        walk = ("walk_forward", {"seconds": 1.0})
        last = "Sorry, I cannot walk right now."
        if streamed:
            server.push(
                Scripted.stream_tools(walk, content=["Walking now."]),
                Scripted.stream_tools(walk),  # the model tries again
                Scripted.stream_text(last),
            )
        else:
            server.push(
                Scripted.tool_calls(walk, content="Walking now."),
                Scripted.tool_calls(walk),
                Scripted.content(last),
            )
        try:
            _ask(conv, "walk forward a bit")
            assert eventually(lambda: len(server.requests) == 3, timeout=15)
            assert eventually(lambda: last in _said(recorder), timeout=10)
            told = [s for s in _said(recorder) if s.startswith("I couldn't")]
            assert told == ["I couldn't walk: the robot is in emergency stop."]
            feedback = server.requests[1].body["messages"][-1]
            assert feedback["role"] == "tool"
            assert "emergency stop" in feedback["content"]
        finally:
            conv.stop()
    finally:
        client.close()
        adam.stop()


# ---------------------------------------------------------------------- defect: low confidence
def test_a_transcript_heard_with_low_confidence_is_not_acted_on(
    runtime: Runtime, recorder: Recorder
) -> None:
    registry = robot_registry(runtime)
    conv = Conversation(
        runtime, registry, RulePlanner(registry), Executor(runtime), min_confidence=0.5
    )
    conv.start()
    try:
        _ask(conv, "nod", confidence=0.2)
        said = recorder.wait_for(lambda e: isinstance(e, SpeechStarted), timeout=5)
        assert isinstance(said, SpeechStarted)
        assert said.text == NOT_CAUGHT  # said instead of planning: no plan can follow it
        assert recorder.of("plan_started") == []
        _ask(conv, "nod", confidence=0.9)  # heard well: acted on
        assert (
            Conversation(runtime, registry, RulePlanner(registry), Executor(runtime)).min_confidence
            == runtime.config.listen.min_confidence
        )  # the default: from the config
        started = recorder.wait_for(lambda e: isinstance(e, PlanStarted), timeout=5)
        assert isinstance(started, PlanStarted)
        assert started.steps == ("play_animation(name='nod')",)
    finally:
        conv.stop()
    notices = [e for e in recorder.of("notice") if "min_confidence" in getattr(e, "message", "")]
    assert notices  # the runtime says why it did not act


def test_the_model_is_asked_the_other_reading_the_registry_reads(
    runtime: Runtime, server: ScriptedOpenAIServer
) -> None:
    """A planner without an understanding of its own (an LLM) is asked the reading anima's
    understanding reads, when it cannot read the best one."""
    server.push(Scripted.stream_text("Okay."))
    conv = _conversation(runtime, server)
    try:
        conv.hear(
            Transcript(
                t=0.0,
                text="Look over to your light.",
                final=True,
                confidence=0.5,
                alternatives=("Look over to your right.",),
            )
        )
        assert server.wait_for_requests(1)
    finally:
        conv.stop()
    asked = server.requests[0].body["messages"][-1]["content"]
    assert "Look over to your right." in asked
    assert "light" not in asked


def test_the_model_is_asked_what_was_heard_without_reading_it_again(
    runtime: Runtime, server: ScriptedOpenAIServer
) -> None:
    """An LLM reads free speech itself: a request anima's understanding reads as nothing is not
    decoded again (that would delay nearly every chat turn); the model gets it as heard."""
    from anima.testing.listening import FakeRecognizer

    heard = "I had such a long day at work."
    recognizer = FakeRecognizer(rereads={heard: ["Look at me."]})
    server.push(Scripted.stream_text("Oh no, tell me about it."))
    conv = _conversation(runtime, server)
    conv.listener = Ears(recognizer)  # type: ignore[assignment]
    try:
        conv.hear(Transcript(t=0.0, text=heard, final=True, confidence=0.8))
        assert server.wait_for_requests(1)
    finally:
        conv.stop()
    assert server.requests[0].body["messages"][-1]["content"] == heard
    assert recognizer.hinted == []


# ---------------------------------------------------------------------- the second call
def test_no_second_request_when_the_feedback_adds_nothing(
    runtime: Runtime, recorder: Recorder, server: ScriptedOpenAIServer
) -> None:
    server.push(
        Scripted.stream_tools(("play_animation", {"name": "nod"}), content=["Sure."]),
        Scripted.stream_text("Hi!"),
    )
    conv = _conversation(runtime, server)
    try:
        _ask(conv, "nod")
        recorder.wait_for(lambda e: e.kind == "plan_finished", timeout=10)
        _ask(conv, "hello")
        assert server.wait_for_requests(2)
        messages = server.requests[1].body["messages"]
        # the second call is the next turn's: all succeeded, nothing to report, no call between
        assert messages[-1]["content"] == "hello"
        tool = next(m for m in messages if m["role"] == "tool")
        assert tool["content"].startswith("Robot feedback: Execution")  # told, not "not run"
    finally:
        conv.stop()


# ---------------------------------------------------------------------- interruption
REST_AFTER_S = 1.0  # the stream's rest comes this long (real s) after its first sentence


def test_a_wake_mid_stream_drops_the_rest_and_nothing_moves(
    runtime: Runtime, recorder: Recorder, server: ScriptedOpenAIServer
) -> None:
    server.push(
        Scripted.sse(
            [
                (0.0, _delta("Hello there! ")),
                (REST_AFTER_S, _delta("This is never said. ")),
                (0.0, _tool("play_animation", '{"name": "nod"}')),
            ]
        )
    )
    conv = _conversation(runtime, server)
    try:
        _ask(conv, "hi")
        recorder.wait_for(lambda e: isinstance(e, SpeechStarted) and e.text == "Hello there!")
        t0 = time.monotonic()
        conv.wake("test")
        ended = recorder.wait_for(lambda e: isinstance(e, SpeechEnded), timeout=5)
        assert isinstance(ended, SpeechEnded)
        assert ended.reason == "stopped"
        assert time.monotonic() - t0 < 1.0
        # past the moment the server sends the rest (its script runs in real time), and past
        # what the runtime would have made of it
        time.sleep(max(0.0, server.sent[0][0] + REST_AFTER_S + 0.5 - time.monotonic()))
        assert runtime.events.flush(5.0)
        assert _said(recorder) == ["Hello there!"]
        assert recorder.of("plan_started") == []
    finally:
        conv.stop()


def _delta(text: str) -> dict[str, object]:
    return {"choices": [{"index": 0, "delta": {"content": text}, "finish_reason": None}]}


def _tool(name: str, arguments: str) -> dict[str, object]:
    call = {
        "index": 0,
        "id": "c0",
        "type": "function",
        "function": {"name": name, "arguments": arguments},
    }
    return {"choices": [{"index": 0, "delta": {"tool_calls": [call]}, "finish_reason": None}]}


# ---------------------------------------------------------------------- the wake's glance
def _changed(runtime: Runtime, still: np.ndarray, since: float, until: float) -> list[float]:
    """When (fake time) the frames sent in ``[since, until]`` differed from ``still``; fails
    unless every tick of that span was sent."""
    history = runtime.driver.history()  # type: ignore[attr-defined]
    frames = [f for f in history if since <= f.t <= until]
    kept = f"{len(history)} frames kept" + (
        f", {history[0].t:.2f}-{history[-1].t:.2f} s" if history else ""
    )
    assert frames, f"no frame in [{since:.2f}, {until:.2f}] s: {kept}"
    assert frames[-1].t >= until - runtime.engine.period, kept
    return [f.t for f in frames if not np.array_equal(f.values, still)]


def test_a_wake_is_acknowledged_with_a_glance_unless_turned_off(runtime: Runtime) -> None:
    # the glance alone: body language would lean the head in as the phase becomes listening
    runtime.body_language.close()
    registry = robot_registry(runtime)
    clock = fake_clock(runtime)
    tick = runtime.engine.period
    for enabled in (False, True):
        conv = Conversation(
            runtime, registry, RulePlanner(registry), Executor(runtime), acknowledge_wake=enabled
        )
        conv.start()
        try:
            with clock.hold():  # the wake's moment, to the tick
                still = runtime.engine.last_frame.copy()
                woke = clock.now()
                conv.wake("push_to_talk")
            # the second the real-time test watched (idle life's first blink comes later)
            assert eventually(lambda w=woke: clock.now() >= w + 1.0, timeout=10)
            moved = _changed(runtime, still, woke, woke + 1.0)
            if enabled:
                assert moved
                assert moved[0] - woke <= tick + 1e-9  # on the next tick (real: 1-16 ms)
                _calm(runtime)  # already looking at the person: a second wake blinks instead
                with clock.hold():
                    still = runtime.engine.last_frame.copy()
                    again = clock.now()
                    conv.wake("push_to_talk")
                assert eventually(lambda a=again: clock.now() >= a + 1.0, timeout=10)
                assert _changed(runtime, still, again, again + 1.0)
            else:
                assert not moved
        finally:
            conv.stop()


def _calm(runtime: Runtime, quiet_ticks: int = 30, within_s: float = 8.0) -> None:
    """Wait until the last ``quiet_ticks`` frames sent are all the same (the gaze settled)."""

    def still() -> bool:
        recent = runtime.driver.history()[-quiet_ticks:]  # type: ignore[attr-defined]
        return len(recent) == quiet_ticks and all(
            np.array_equal(f.values, recent[0].values) for f in recent
        )

    assert eventually(still, timeout=within_s), "the robot never came to rest"


def test_the_glance_never_fights_a_commanded_move(runtime: Runtime, recorder: Recorder) -> None:
    registry = robot_registry(runtime)
    conv = Conversation(runtime, registry, RulePlanner(registry), Executor(runtime))
    conv.start()
    try:
        runtime.execute(cmd.PlayAnimation(name="LOOKUP_Waving"))
        recorder.wait_for(lambda e: e.kind == "move_started")
        conv.wake("push_to_talk")  # the glance is decided here, on this thread
        assert runtime.events.flush(5.0)  # and what the phase change set off has run
        assert not any(o.startswith("gaze") for o in runtime.engine.state().offsets)
        done = recorder.wait_for(lambda e: e.kind == "move_finished", timeout=10)
        assert getattr(done, "cut", None) is False  # the wave played to its end
    finally:
        conv.stop()


class GateLog:
    """A stand-in for the listener that records how the conversation gates it."""

    def __init__(self, recorder: Recorder) -> None:
        self.recorder = recorder
        self.gates: list[tuple[bool, int]] = []  # (gated, end_speak events seen by then)

    def start(self) -> None:
        """Nothing to start."""

    def stop(self) -> None:
        """Nothing to stop."""

    def gate(self, on: bool) -> None:
        self.gates.append((on, len(self.recorder.of("end_speak"))))


def test_the_listener_stays_gated_between_the_sentences_of_a_streamed_reply(
    runtime: Runtime, recorder: Recorder, server: ScriptedOpenAIServer
) -> None:
    server.push(Scripted.stream_text("One. ", "Two. ", "Three.", gap_s=0.05))
    conv = _conversation(runtime, server)
    ears = GateLog(recorder)  # the recorder subscribed first: it sees each event first
    conv.listener = ears  # type: ignore[assignment]
    try:
        # the sentences come faster than they are said: no fake time passes until the whole
        # reply has arrived (its turn's timing is noted once the planner's stream has ended)
        with fake_clock(runtime).hold():
            _ask(conv, "count")
            assert eventually(lambda: len(conv.timings) == 1, timeout=10)
        assert eventually(lambda: len(recorder.of("end_speak")) == 3, timeout=10)
        assert eventually(lambda: ears.gates and ears.gates[-1][0] is False, timeout=2)
        opened = [ended for gated, ended in ears.gates if not gated]
        assert opened[0] == 3  # opened only once the last sentence had ended
        assert ears.gates[0][0] is True
    finally:
        conv.stop()


def test_what_might_promise_an_action_waits_for_the_plan(runtime: Runtime) -> None:
    from anima.agent.reply import ActionWords

    words = ActionWords(robot_registry(runtime))
    for promise in (
        "Let me dance!",
        "Sure.",
        "I'll nod.",
        "I can do that.",
        "Waving now!",
        "Okay, looking left.",
        "Here goes.",
        "Yes, of course.",
    ):
        assert words.promise(promise), promise
    for chat in ("I'm fine, thank you.", "Hello there!", "My name is Anima.", "It is sunny."):
        assert not words.promise(chat), chat
