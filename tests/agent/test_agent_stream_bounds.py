"""A streamed reply's reader costs what the stream is worth (issue 30: "a 900 KB SSE event
leaves +88 MB never returned"): one event is bounded before it is decoded, and every byte and
character is handled once, with no per-character objects and no rescanning of what came before.
Real parts: the scripted OpenAI-compatible server on 127.0.0.1 and the real planner.
"""

from __future__ import annotations

import json
import time
import tracemalloc

import pytest

from anima.agent.planners import APOLOGY
from anima.agent.planners.http import MAX_EVENT_BYTES
from anima.agent.planners.streaming import ChatStream, JsonReplyReader, Sentences
from anima.events import EventHub
from anima.testing.llm import Scripted, ScriptedOpenAIServer, chunk

from .conftest import openai_planner, rejections

pytestmark = pytest.mark.integration

pytest.importorskip("httpx")


class _Sink:
    def __init__(self) -> None:
        self.got: list[object] = []

    def actions(self, actions: list[str]) -> None:
        self.got.append(actions)

    def words(self, text: str) -> None:
        self.got.append(text)


def _junk_event(size: int) -> str:
    """One chunk event of about ``size`` bytes that decodes into many small objects."""
    junk = ",".join(["[]"] * (size // 3))
    return '{"choices": [{"index": 0, "delta": {}}], "junk": [' + junk + "]}"


_LIMIT = f"over the {MAX_EVENT_BYTES:,}-byte limit of one event"


@pytest.mark.parametrize("lines", [1, 900], ids=["one-line", "many-data-lines"])
def test_an_event_over_the_bound_is_refused_before_it_is_decoded(
    server: ScriptedOpenAIServer, hub: EventHub, lines: int
) -> None:
    event = _junk_event(900_000)
    if lines > 1:  # the same event cut into data lines (joined with new lines, still JSON)
        step = len(event) // lines
        event = "\ndata: ".join(event[i : i + step] for i in range(0, len(event), step))
    server.push(Scripted.sse([(0.0, event)]))
    planner = openai_planner(server, hub, mode="tools", timeout_s=5.0)
    try:
        tracemalloc.start()
        try:
            reply = planner.plan("talk", _Sink())
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        assert reply.response == APOLOGY
        assert reply.actions == []
        assert reply.error is not None
        assert f"event 1 is {_LIMIT}" in reply.error
        (rejected,) = rejections(hub)
        assert _LIMIT in rejected.reason
        # the server's own copies of the event (~1.8 MB) included; before: 16 MB (300,000
        # lists decoded), the event read whole first
        assert peak < 4_000_000, peak
        server.push(Scripted.stream_text("Fine."))  # the next request still works
        assert planner.plan("again", _Sink()).error is None
    finally:
        planner.close()


def test_events_under_the_bound_still_make_a_large_reply(
    server: ScriptedOpenAIServer, hub: EventHub
) -> None:
    piece = "Sure thing. " * 15_000  # 180 kB an event, 720 kB in all: under both bounds
    server.push(Scripted.stream_text(*[piece] * 4))
    planner = openai_planner(server, hub, mode="tools", timeout_s=5.0)
    try:
        reply = planner.plan("talk", _Sink())
    finally:
        planner.close()
    assert reply.error is None
    assert reply.response.startswith("Sure thing.")


def test_a_long_stream_without_a_sentence_end_is_read_in_linear_time() -> None:
    pieces = ["x" * 100] * 2000  # 200 kB with no sentence end, as a server streams it
    t0 = time.monotonic()
    sentences = Sentences()
    for piece in pieces:
        assert list(sentences.feed(piece)) == []
    reader = JsonReplyReader(_Sink())
    reader.feed('{"response": "')
    for piece in pieces:
        reader.feed(piece)
    elapsed = time.monotonic() - t0
    assert list(sentences.flush()) == ["x" * 200_000]
    assert elapsed < 1.0  # before: the whole text rescanned and copied each piece, 4.6 s


def test_a_sentence_end_split_across_pieces_is_still_found() -> None:
    sentences = Sentences()
    got = [s for p in ["Hello", ' there!"', ")", " And", " you?", " "] for s in sentences.feed(p)]
    assert got == ['Hello there!")', "And you?"]


def test_characters_past_latin1_cost_no_object_each() -> None:
    sink = _Sink()
    reader = JsonReplyReader(sink)
    tracemalloc.start()
    try:
        reader.feed('{"actions": ["' + "一" * 100_000 + '"], "response": "' + "é一" * 50_000)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    reader.feed('"}')
    reader.finish([])
    assert sink.got[0] == ["一" * 100_000]
    assert sink.got[1] == "é一" * 50_000
    assert peak < 2_000_000, peak  # before: 8.7 MB (a str object per character kept)


def test_tool_call_pieces_are_joined_once() -> None:
    stream = ChatStream("tools", _Sink())
    stream.event(chunk({"tool_calls": [{"index": 0, "id": "c0", "function": {"name": "say"}}]}))
    for piece in ['{"text": "', *["ab"] * 500, '"}']:
        stream.event(chunk({"tool_calls": [{"index": 0, "function": {"arguments": piece}}]}))
    message = stream.message()["choices"][0]["message"]  # type: ignore[index]
    (call,) = message["tool_calls"]
    assert call["function"]["name"] == "say"
    assert json.loads(call["function"]["arguments"]) == {"text": "ab" * 500}
