"""Hostile LLM servers (issue 12, items 5 and 13): huge, dribbling, nested, garbage and
wrongly shaped replies from a real HTTP server on 127.0.0.1, against the real planners and the
real conversation loop. Each must end as a clear refusal within the planner's limits, never
as an exception, a stuck turn or a 50 MB utterance, and the next request must still work.
"""

from __future__ import annotations

import threading
import time
import tracemalloc
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from anima import commands as cmd
from anima.agent.actions import ActionRegistry
from anima.agent.conversation import Conversation
from anima.agent.executor import Executor
from anima.agent.planners import APOLOGY
from anima.agent.planners.base import MAX_SPOKEN_CHARS, PlannerReply, speakable
from anima.agent.planners.dify import DifyPlanner
from anima.agent.planners.http import MAX_REPLY_BYTES
from anima.agent.planners.openai import OpenAIPlanner
from anima.events import EventHub, SpeechStarted
from anima.runtime import Runtime
from anima.testing import eventually
from anima.testing.llm import Scripted, ScriptedDifyServer, ScriptedOpenAIServer, nested

from .conftest import Recorder, openai_planner, rejections

pytestmark = pytest.mark.integration

pytest.importorskip("httpx")

DEEP = 100_000  # far past the recursion limit (1000): the C decoder raises RecursionError
GOOD = Scripted.json_reply("Nodding.", ["play_animation('nod')"])


def _planner(server: ScriptedOpenAIServer, hub: EventHub, **kw: Any) -> OpenAIPlanner:
    return openai_planner(server, hub, **{"mode": "json", "timeout_s": 5.0, **kw})


def _refused(reply: PlannerReply, hub: EventHub, why: str) -> None:
    """An apology, no actions, and one error event giving the reason."""
    assert reply.response == APOLOGY
    assert reply.actions == []
    assert reply.error is not None
    assert why in reply.error, reply.error
    assert len(reply.error) < 300  # a reason, never the reply itself
    (event,) = rejections(hub)
    assert why in event.reason


def _still_answers(server: ScriptedOpenAIServer, planner: OpenAIPlanner) -> None:
    if planner.mode == "json":
        server.push(GOOD)
    else:
        server.push(Scripted.tool_calls(("play_animation", {"name": "nod"})))
    reply = planner.plan("nod")
    assert reply.error is None, reply.error
    assert reply.actions in (["play_animation('nod')"], ["play_animation(name='nod')"])


def _request_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name.endswith("-request") and t.is_alive()]


# ---------------------------------------------------------------------- size
@pytest.mark.parametrize("size", [MAX_REPLY_BYTES, 50_000_000])
@pytest.mark.parametrize("declare_length", [True, False], ids=["content-length", "no-length"])
def test_a_huge_reply_is_refused_with_bounded_memory_and_time(
    server: ScriptedOpenAIServer, hub: EventHub, size: int, declare_length: bool
) -> None:
    server.push(Scripted.huge(size, declare_length=declare_length))
    planner = _planner(server, hub)
    tracemalloc.start()
    try:
        t0 = time.monotonic()
        reply = planner.plan("nod")
        elapsed = time.monotonic() - t0
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    try:
        _refused(reply, hub, "over the 1,000,000-byte limit")
        assert peak < 8_000_000  # before: the whole body and its decoded copy (162 MB at 50 MB)
        assert elapsed < 10.0  # loose: refused at the header or after 1 MB, not after 50 MB
        _still_answers(server, planner)
    finally:
        planner.close()


def test_a_long_response_under_the_cap_is_bounded_to_what_may_be_spoken(
    server: ScriptedOpenAIServer, hub: EventHub
) -> None:
    server.push(Scripted.huge(600_000))  # a valid reply whose response is 600 kB of sentences
    planner = _planner(server, hub)
    try:
        reply = planner.plan("talk to me")
    finally:
        planner.close()
    assert reply.error is None
    assert 0 < len(reply.response) <= MAX_SPOKEN_CHARS
    assert reply.response.endswith("Sure thing.")  # cut at a sentence end


# ---------------------------------------------------------------------- time
@pytest.mark.parametrize("head", [False, True], ids=["body", "status-and-headers"])
def test_a_dribbling_server_ends_the_request_at_its_deadline(
    server: ScriptedOpenAIServer, hub: EventHub, head: bool
) -> None:
    """A byte every 0.4 s never trips httpx's per-read timeout (1 s); the request's deadline
    does (before: a 240-byte reply at a byte a second took 244 s against timeout_s=2)."""
    server.push(GOOD.dribble(0.4, head=head))
    planner = _planner(server, hub, timeout_s=1.0)
    try:
        t0 = time.monotonic()
        reply = planner.plan("nod")
        elapsed = time.monotonic() - t0
        _refused(reply, hub, "within the timeout (1 s)")
        assert 0.75 < elapsed < 5.0  # loose: the deadline plus scheduling on a busy machine
        # the abandoned request's socket was cut: its thread ends now, not in four minutes
        assert eventually(lambda: not _request_threads(), timeout=3.0)
        _still_answers(server, planner)
    finally:
        planner.close()


def test_an_interrupt_releases_a_dribbling_request_and_ends_its_thread(
    server: ScriptedOpenAIServer, hub: EventHub
) -> None:
    """A wake releases the turn at once, and the request's socket is cut so its thread ends
    too (before: it read on until the server finished, minutes later)."""
    server.push(GOOD.dribble(1.0, head=True))
    planner = _planner(server, hub, timeout_s=60.0)
    replies: list[PlannerReply] = []
    asking = threading.Thread(target=lambda: replies.append(planner.plan("nod")))
    asking.start()
    try:
        assert server.wait_for_requests(1)
        planner.interrupt()
        asking.join(2.0)
        assert not asking.is_alive()
        assert replies[0].interrupted
        assert eventually(lambda: not _request_threads(), timeout=3.0)
        _still_answers(server, planner)
    finally:
        planner.close()


def test_a_compressed_reply_is_refused(server: ScriptedOpenAIServer, hub: EventHub) -> None:
    """The byte cap counts what is parsed, so the planner asks for identity and refuses a
    compressed body (a 1 kB gzip can inflate to 1 MB)."""
    import gzip

    server.push(
        Scripted(raw=gzip.compress(b" " * 2_000_000), headers=(("Content-Encoding", "gzip"),))
    )
    planner = _planner(server, hub)
    try:
        _refused(planner.plan("nod"), hub, "compressed ('gzip')")
        assert server.requests[0].headers["accept-encoding"] == "identity"
        _still_answers(server, planner)
    finally:
        planner.close()


# ---------------------------------------------------------------------- decoding
NESTED_ARGUMENTS = Scripted(
    body={
        "choices": [
            {
                "message": {
                    "content": "",
                    "tool_calls": [
                        {"id": "a", "function": {"name": "say", "arguments": nested(DEEP)}}
                    ],
                }
            }
        ]
    }
)
HUGE_INT = '{"choices": [{"message": {"content": "hi"}}], "usage": ' + "9" * 5000 + "}"


@pytest.mark.parametrize(
    ("scripted", "mode", "why"),
    [
        (Scripted(raw=nested(DEEP)), "json", "nested too deeply"),
        (Scripted(raw='{"choices": ' + nested(DEEP) + "}"), "tools", "nested too deeply"),
        (Scripted.content('{"plan": ' + nested(DEEP) + "}"), "json", "nested too deeply"),
        (Scripted.content('{"response": "x", "actions": ' + nested(DEEP) + "}"), "json", "deeply"),
        (NESTED_ARGUMENTS, "tools", "nested too deeply"),
        (Scripted.garbage(), "json", "not UTF-8 text"),
        (Scripted(raw=b'{"choices": [{"message": {"content": "caf\xe9"}}]}'), "json", "UTF-8"),
        (Scripted(raw=b"\x00\x00\x00\x00garbage"), "tools", "malformed reply"),
        (Scripted(raw=HUGE_INT), "json", "value too big"),
        (Scripted.content('{"response": "x", "n": ' + "7" * 5000 + "}"), "json", "too big"),
    ],
    ids=[
        "body",
        "choices",
        "content",
        "actions",
        "tool-arguments",
        "garbage",
        "latin-1",
        "nul-bytes",
        "int-in-body",
        "int-in-content",
    ],
)
def test_a_reply_that_cannot_be_decoded_is_a_planner_error_with_a_reason(
    server: ScriptedOpenAIServer, hub: EventHub, scripted: Scripted, mode: str, why: str
) -> None:
    server.push(scripted)
    planner = _planner(server, hub, mode=mode)
    try:
        _refused(planner.plan("nod"), hub, why)
        _still_answers(server, planner)
    finally:
        planner.close()


def _choice(message: Any) -> Scripted:
    return Scripted(body={"choices": [{"message": message}]})


def _calls(*calls: Any) -> Scripted:
    return _choice({"content": "", "tool_calls": list(calls)})


@pytest.mark.parametrize(
    ("scripted", "mode"),
    [
        # the body
        (Scripted(body=[]), "tools"),
        (Scripted(body="choices"), "tools"),
        (Scripted(body=42), "tools"),
        (Scripted(body=None), "tools"),
        # choices
        (Scripted(body={"choices": "x"}), "tools"),
        (Scripted(body={"choices": {"0": {}}}), "tools"),
        (Scripted(body={"choices": [None]}), "tools"),
        (Scripted(body={"choices": [[]]}), "tools"),
        (Scripted(body={"choices": [{"message": None}]}), "tools"),
        # the message
        (_choice([]), "tools"),
        (_choice(7), "tools"),
        (_choice({"content": 5}), "tools"),
        (_choice({"content": ["a"]}), "json"),
        (_choice({"content": {"response": "x"}}), "json"),
        # tool calls
        (_choice({"content": "", "tool_calls": {"a": 1}}), "tools"),
        (_choice({"content": "", "tool_calls": "play"}), "tools"),
        (_calls(None), "tools"),
        (_calls({"function": None}), "tools"),
        (_calls({"function": []}), "tools"),
        (_calls({"function": {"name": ["say"]}}), "tools"),
        (_calls({"function": {"name": {"a": [1] * 1000}}}), "tools"),
        (_calls({"function": {"name": "say", "arguments": 5}}), "tools"),
        (_calls({"function": {"name": "say", "arguments": "[1]"}}), "tools"),
        (_calls({"function": {"name": "say", "arguments": {"text": [["x"]]}}}), "tools"),
        # the seed's reply object (json mode)
        (Scripted.content('{"response": ["x"]}'), "json"),
        (Scripted.content('{"response": "x", "actions": {"a": 1}}'), "json"),
        (Scripted.content('{"response": "x", "actions": [["nod"]]}'), "json"),
        (Scripted.content('{"response": "x", "plan": 5}'), "json"),
    ],
)
def test_valid_json_of_the_wrong_shape_at_every_level_is_refused(
    server: ScriptedOpenAIServer, hub: EventHub, scripted: Scripted, mode: str
) -> None:
    server.push(scripted)
    planner = _planner(server, hub, mode=mode)
    try:
        reply = planner.plan("nod")
        _refused(reply, hub, "malformed reply")
        assert planner.history == []  # the failed exchange is not kept
        _still_answers(server, planner)
    finally:
        planner.close()


# ---------------------------------------------------------------------- Dify
@pytest.mark.parametrize(
    ("scripted", "why"),
    [
        (Scripted.huge(50_000_000, declare_length=False), "over the 1,000,000-byte limit"),
        (Scripted(raw='{"answer": ' + nested(DEEP) + "}"), "nested too deeply"),
        (Scripted.dify('{"response": ' + nested(DEEP) + "}"), "nested too deeply"),
        (Scripted.garbage(), "not UTF-8 text"),
        (Scripted.dify("hi").dribble(1.0), "within the timeout (2 s)"),
    ],
    ids=["huge", "nested-body", "nested-answer", "garbage", "dribbling"],
)
def test_the_dify_planner_refuses_hostile_replies_too(scripted: Scripted, why: str) -> None:
    hub = EventHub()
    with ScriptedDifyServer([scripted, Scripted.dify("Hello there.")]) as srv:
        planner = DifyPlanner(base_url=srv.base_url, api_key="k", timeout_s=2.0, events=hub)
        try:
            t0 = time.monotonic()
            reply = planner.plan("hello")
            assert time.monotonic() - t0 < 6.0
            _refused(reply, hub, why)
            assert planner.plan("hello").response == "Hello there."
        finally:
            planner.close()


def test_a_long_plain_dify_answer_is_bounded_to_what_may_be_spoken() -> None:
    words = "This is a sentence about nothing at all. " * 20_000  # 820 kB of plain text
    with ScriptedDifyServer([Scripted.dify(words)]) as srv:
        planner = DifyPlanner(base_url=srv.base_url, api_key="k")
        try:
            reply = planner.plan("talk")
        finally:
            planner.close()
    assert reply.error is None
    assert len(reply.response) <= MAX_SPOKEN_CHARS
    assert reply.response.endswith("nothing at all.")


def test_speakable_cuts_at_a_sentence_or_a_word_and_drops_what_cannot_be_said() -> None:
    assert speakable("  Hello\n\tthere.  ") == "Hello there."
    assert speakable("a\x00b\ud800c\u200bd") == "abcd"
    long = "One two three. " * 100
    cut = speakable(long)
    assert len(cut) <= MAX_SPOKEN_CHARS
    assert cut.endswith("three.")
    unbroken = "word " * 200
    cut = speakable(unbroken)
    assert len(cut) <= MAX_SPOKEN_CHARS
    assert cut.endswith("word…")
    assert speakable("x" * 10_000_000) == "x" * (MAX_SPOKEN_CHARS - 1) + "…"


# ---------------------------------------------------------------------- the conversation
@pytest.fixture
def talk(
    server: ScriptedOpenAIServer, runtime: Runtime, registry: ActionRegistry
) -> Iterator[Callable[[str], None]]:
    """A conversation on the simulated robot with the scripted server as its planner;
    ``talk(text)`` asks it something."""
    planner = OpenAIPlanner(
        registry,
        base_url=server.base_url,
        model="m",
        mode="json",
        timeout_s=2.0,
        events=runtime.events,
    )
    runtime.attach_agent(Conversation(runtime, registry, planner, Executor(runtime)))

    def ask(text: str) -> None:
        runtime.execute(cmd.Ask(text=text))

    try:
        yield ask
    finally:
        runtime.detach_agent()


def _said(recorder: Recorder) -> list[str]:
    return [e.text for e in recorder.of("start_speak") if isinstance(e, SpeechStarted)]


def _next_request_works(
    server: ScriptedOpenAIServer, recorder: Recorder, talk: Callable[[str], None]
) -> None:
    """The agent answers the next request (and so the hostile turn is over)."""
    server.push(Scripted.json_reply("Here is a nod.", ["play_animation('nod')"]))
    talk("nod")
    recorder.wait_for(lambda e: isinstance(e, SpeechStarted) and e.text == "Here is a nod.")
    recorder.wait_for(lambda e: e.kind == "move_started" and getattr(e, "name", "") == "nod")


def test_a_refused_plan_is_not_announced_and_the_robot_says_once_it_could_not(
    server: ScriptedOpenAIServer, recorder: Recorder, talk: Callable[[str], None]
) -> None:
    """Before: the model's "Sure." was spoken 4 times (the plan and 3 feedback rounds) and
    the robot never said it did nothing."""
    for _ in range(4):  # the model insists on a gesture the robot does not have
        server.push(Scripted.json_reply("Sure.", ["play_animation('dance')"]))
    talk("dance for me")
    assert server.wait_for_requests(4)
    _next_request_works(server, recorder, talk)
    said = _said(recorder)
    assert said[0] == "Sorry, I can't do that: 'dance' is not something I know."
    assert said.count(said[0]) == 1  # once per turn
    assert "Sure." not in said
    assert recorder.of("plan_started") != []  # only the nod's
    feedback = server.requests[1].body["messages"][-1]["content"]
    assert feedback.startswith("Robot feedback: plan rejected, nothing was done")


def test_a_corrected_plan_after_a_refusal_is_spoken_and_run(
    server: ScriptedOpenAIServer, recorder: Recorder, talk: Callable[[str], None]
) -> None:
    server.push(
        Scripted.json_reply("Sure.", ["play_animation('dance')"]),
        Scripted.json_reply("I can nod instead.", ["play_animation('nod')"]),
    )
    talk("dance")
    recorder.wait_for(lambda e: e.kind == "move_started" and getattr(e, "name", "") == "nod")
    # the plan's words start once its plan has started: the nod's move and they may come in
    # either order
    recorder.wait_for(lambda e: isinstance(e, SpeechStarted) and e.text == "I can nod instead.")
    assert _said(recorder) == [
        "Sorry, I can't do that: 'dance' is not something I know.",
        "I can nod instead.",
    ]


@pytest.mark.parametrize(
    "scripted",
    [
        Scripted(raw=nested(DEEP)),
        Scripted.huge(50_000_000),
        Scripted.garbage(),
        GOOD.dribble(1.0),
    ],
    ids=["nested", "huge", "garbage", "dribbling"],
)
def test_a_hostile_reply_is_apologized_for_and_the_next_request_works(
    server: ScriptedOpenAIServer,
    recorder: Recorder,
    talk: Callable[[str], None],
    scripted: Scripted,
) -> None:
    """Before: a nested reply raised RecursionError on the agent thread (nothing spoken)."""
    server.push(scripted)
    t0 = time.monotonic()
    talk("nod")
    recorder.wait_for(lambda e: isinstance(e, SpeechStarted) and e.text == APOLOGY, timeout=8)
    assert time.monotonic() - t0 < 6.0  # loose: timeout_s=2 plus a margin
    _next_request_works(server, recorder, talk)
    assert _said(recorder) == [APOLOGY, "Here is a nod."]


def test_a_huge_response_is_spoken_bounded(
    server: ScriptedOpenAIServer,
    recorder: Recorder,
    talk: Callable[[str], None],
    runtime: Runtime,
) -> None:
    server.push(Scripted.huge(900_000))  # valid, under the cap: 900 kB of "Sure thing."
    talk("talk to me")
    said = recorder.wait_for(lambda e: isinstance(e, SpeechStarted))
    assert isinstance(said, SpeechStarted)
    assert 0 < len(said.text) <= MAX_SPOKEN_CHARS
    # 500 characters take ~30 s to say, and the next reply's start_speak comes when its audio
    # starts (after this one): stop it rather than wait
    runtime.execute(cmd.StopSpeaking())
    _next_request_works(server, recorder, talk)


class _BrokenPlanner:
    """A planner with a bug: it raises instead of apologizing."""

    name = "broken"

    def __init__(self) -> None:
        self.calls = 0

    def plan(self, request: str) -> PlannerReply:
        self.calls += 1
        if self.calls == 1:
            raise RecursionError("maximum recursion depth exceeded")
        return PlannerReply(response="Fine now.")

    def feedback(self, summary: str) -> PlannerReply | None:
        return None

    def reset(self) -> None:
        """Nothing to forget."""

    def interrupt(self) -> None:
        """Nothing in flight."""

    def close(self) -> None:
        """Nothing to release."""


def test_a_planner_that_raises_is_apologized_for(
    runtime: Runtime, registry: ActionRegistry, recorder: Recorder
) -> None:
    runtime.attach_agent(Conversation(runtime, registry, _BrokenPlanner(), Executor(runtime)))
    try:
        runtime.execute(cmd.Ask(text="hi"))
        recorder.wait_for(lambda e: isinstance(e, SpeechStarted) and e.text == APOLOGY)
        runtime.execute(cmd.Ask(text="hi again"))
        recorder.wait_for(lambda e: isinstance(e, SpeechStarted) and e.text == "Fine now.")
        notices = [getattr(e, "message", "") for e in recorder.of("notice")]
        assert any("planner failed: RecursionError" in m for m in notices)
    finally:
        runtime.detach_agent()


# ---------------------------------------------------------------------- `anima agent`'s ears
@pytest.mark.model  # Whisper and Silero
def test_the_remote_ears_survive_hostile_messages_and_report_them_bounded() -> None:
    """Before: a 100,000-deep payload raised RecursionError out of paho's callback, which ended
    its network thread: the ears went deaf to the runtime (and never un-gated)."""
    import os
    import queue

    from anima.agent.remote import MAX_REPORTED, RemoteEars
    from anima.listening.listener import Listener
    from anima.listening.sources import RawPcmSource
    from anima.testing.mosquitto import Mosquitto, find_mosquitto
    from anima.testing.mqtt import MqttProbe

    if find_mosquitto() is None:
        pytest.skip("Debian mosquitto is not installed")
    read_end, write_end = os.pipe()
    silence = os.fdopen(read_end, "rb")  # nothing is written: nothing is heard
    lines: queue.SimpleQueue[str] = queue.SimpleQueue()
    with Mosquitto() as broker:
        ears = RemoteEars(
            lambda e: Listener(
                RawPcmSource(silence),
                phrases=["nod"],
                results=e.take,
            ),
            broker.address,
            "hostile",
            lines.put,
        )
        ears.start()
        try:
            with MqttProbe(broker.address) as probe:
                for payload in (nested(DEEP).encode(), b"\xff\xfe" * 600_000, b'"ok"'):
                    probe.publish("hostile/agent/plan", payload, qos=1)
                    line = lines.get(timeout=5)  # each one reported: the ears still hear
                    assert line.startswith("plan: ")
                    assert len(line) <= len("plan: ") + MAX_REPORTED + 1
                assert line == "plan: ok"
        finally:
            ears.stop()
            os.close(write_end)
            silence.close()  # the source reads it, never closes it


@pytest.mark.parametrize("mode", ["json", "tools"])
def test_a_huge_reply_is_not_kept_whole_in_the_history(mode: str) -> None:
    """The next request carries the bounded reply, not the 1 MB one: re-encoding it into every
    later request held the GIL ~40 ms a time and cost the motion loop its deadlines."""
    hub = EventHub()
    with ScriptedOpenAIServer() as server:
        planner = _planner(server, hub, mode=mode)
        if mode == "json":
            server.push(Scripted.huge(MAX_REPLY_BYTES - 1024))
        else:
            words = "Sure thing. " * 80_000
            server.push(Scripted.tool_calls(("play_animation", {"name": "nod"}), content=words))
        first = planner.plan("wave")
        assert first.error is None, first.error
        assert len(first.response) <= MAX_SPOKEN_CHARS
        _still_answers(server, planner)
        later = server.requests[-1].body
        assert later is not None
        kept = next(m for m in later["messages"] if m["role"] == "assistant")
        assert len(kept["content"] or "") < 2 * MAX_SPOKEN_CHARS
        assert len(str(later)) < 20_000


# ---------------------------------------------------------------------- streams (issue 13)
class _Sink:
    def __init__(self) -> None:
        self.got: list[object] = []

    def actions(self, actions: list[str]) -> None:
        self.got.append(actions)

    def words(self, text: str) -> None:
        self.got.append(text)


_BIG = "word " * 50_000  # 250 KB a piece


@pytest.mark.parametrize(
    ("scripted", "why"),
    [
        (Scripted.sse([(0.0, "{not json")]), "event 1 of the stream"),
        (Scripted.sse([(0.0, {"error": {"message": "model crashed"}})]), "model crashed"),
        (Scripted.sse([(0.0, [1, 2])]), "event 1 is not an object"),
        (
            Scripted.sse([(0.0, {"choices": [{"delta": {"tool_calls": [{"index": 10**9}]}}]})]),
            "at most 50 calls",
        ),
        (Scripted.stream_text(*[_BIG] * 5), "over the 1,000,000-byte limit"),
        (Scripted.stream_text("Hi", " there.", gap_s=3.0), "within the timeout (2 s)"),
        (Scripted.sse([(0.0, {"choices": [{"delta": {"content": "{oops"}}]})]), "no JSON"),
        # llama-cpp-python's server, asked to stream tool calls, answers 200 and then nothing
        # (the robot stayed silent: no apology, no CommandRejected)
        (Scripted.sse([], done=False), "ended before any event"),
        (Scripted.sse([]), "ended before any event"),  # only the [DONE]
    ],
    ids=[
        "not-json",
        "error-event",
        "not-object",
        "tool-index",
        "huge",
        "slow",
        "bad-json",
        "empty",
        "only-done",
    ],
)
def test_a_hostile_stream_is_a_planner_error_with_a_reason(
    server: ScriptedOpenAIServer, hub: EventHub, scripted: Scripted, why: str
) -> None:
    server.push(scripted)
    mode = "json" if why in ("no JSON", "within the timeout (2 s)") else "tools"
    planner = openai_planner(server, hub, mode=mode, timeout_s=2.0)
    try:
        _refused(planner.plan("nod", _Sink()), hub, why)
        _still_answers(server, planner)
    finally:
        planner.close()
