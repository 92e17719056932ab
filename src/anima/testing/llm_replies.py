"""The replies a scripted LLM server plays (:class:`Scripted`), and helpers to build bodies.

Used through :mod:`anima.testing.llm` (which re-exports them); see there for the servers.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, kw_only=True)
class Scripted:
    """One scripted answer."""

    status: int = 200
    body: Any = None  # JSON-encoded unless ``raw`` is given
    raw: str | bytes | None = None  # sent as is (to play a server that answers nonsense)
    delay_s: float = 0.0  # wait this long before answering (timeouts, slow replies)
    every_s: float = 0.0  # > 0: send the body one byte at a time, this far apart (dribbling)
    filler: int = 0  # > 0: a JSON reply whose response is this many bytes (see huge())
    declare_length: bool = True  # False: no Content-Length, the body ends when the link closes
    dribble_head: bool = False  # with every_s: the status line and headers dribble too
    headers: tuple[tuple[str, str], ...] = ()  # more response headers (Content-Encoding, …)
    events: tuple[tuple[float, Any], ...] | None = None  # SSE: (delay before, data) each

    @classmethod
    def sse(cls, events: Iterable[tuple[float, Any]], *, done: bool = True) -> Scripted:
        """A stream of server-sent events: each ``(delay_s, data)`` is sent ``delay_s`` after
        the one before as ``data: <data>`` (JSON-encoded unless a str), then ``data: [DONE]``
        when ``done``."""
        items = [*events, *([(0.0, "[DONE]")] if done else [])]
        return cls(events=tuple(items))

    @classmethod
    def stream_text(cls, *pieces: str, gap_s: float = 0.0, first_s: float = 0.0) -> Scripted:
        """A streamed completion whose content arrives in ``pieces``, ``gap_s`` apart."""
        events = [
            (first_s if i == 0 else gap_s, chunk({"content": p})) for i, p in enumerate(pieces)
        ]
        return cls.sse([*events, (0.0, chunk({}, finish="stop"))])

    @classmethod
    def stream_tools(
        cls,
        *calls: tuple[str, dict[str, Any]],
        content: Iterable[str] = (),
        gap_s: float = 0.0,
    ) -> Scripted:
        """A streamed completion: ``content`` pieces first, then each tool call (its name, then
        its arguments in two pieces), ``gap_s`` between events."""
        events: list[tuple[float, Any]] = [(gap_s, chunk({"content": p})) for p in content]
        for i, (name, args) in enumerate(calls):
            text = json.dumps(args)
            half = len(text) // 2
            head = {"index": i, "id": f"call_{i}", "type": "function"}
            events.append((gap_s, chunk({"tool_calls": [{**head, "function": {"name": name}}]})))
            for part in (text[:half], text[half:]):
                delta = {"tool_calls": [{"index": i, "function": {"arguments": part}}]}
                events.append((gap_s, chunk(delta)))
        return cls.sse([*events, (0.0, chunk({}, finish="tool_calls"))])

    @classmethod
    def stream_json(
        cls,
        response: str,
        actions: Iterable[str] = (),
        *,
        pieces: int = 8,
        gap_s: float = 0.0,
        actions_first: bool = True,
    ) -> Scripted:
        """The seed's JSON reply streamed as content in about ``pieces`` pieces; ``actions``
        before ``response`` unless ``actions_first`` is False."""
        reply = {"actions": list(actions), "response": response}
        if not actions_first:
            reply = {"response": response, "actions": list(actions)}
        text = json.dumps(reply)
        size = max(1, len(text) // pieces)
        return cls.stream_text(
            *(text[i : i + size] for i in range(0, len(text), size)), gap_s=gap_s
        )

    @classmethod
    def tool_calls(cls, *calls: tuple[str, dict[str, Any]], content: str = "") -> Scripted:
        """A chat completion whose message calls these tools, in order."""
        return cls(
            body=completion(
                content or None,
                [
                    {
                        "id": f"call_{i}",
                        "type": "function",
                        "function": {"name": name, "arguments": json.dumps(args)},
                    }
                    for i, (name, args) in enumerate(calls)
                ],
            )
        )

    @classmethod
    def content(cls, text: str) -> Scripted:
        """A chat completion whose message is ``text`` (a JSON reply, in JSON mode)."""
        return cls(body=completion(text))

    @classmethod
    def json_reply(
        cls, response: str, actions: Iterable[str] = (), plan: str | None = None
    ) -> Scripted:
        """A chat completion whose content is the seed's JSON reply object."""
        reply: dict[str, Any] = {"response": response, "actions": list(actions)}
        if plan is not None:
            reply["plan"] = plan
        return cls.content(json.dumps(reply))

    @classmethod
    def error(cls, status: int = 500, message: str = "internal error") -> Scripted:
        return cls(status=status, body={"error": {"message": message}})

    @classmethod
    def dify(cls, answer: str, conversation_id: str | None = None) -> Scripted:
        """A Dify blocking answer (the server fills in the conversation id when None)."""
        body: dict[str, Any] = {"event": "message", "answer": answer}
        if conversation_id is not None:
            body["conversation_id"] = conversation_id
        return cls(body=body)

    @classmethod
    def huge(cls, size: int, *, declare_length: bool = True) -> Scripted:
        """A chat completion whose content is the seed's JSON reply with a ``response`` of
        ``size`` bytes of words (valid to the end). It is generated while it is sent, so a
        50 MB reply costs the server nothing; ``declare_length=False`` sends no Content-Length.
        """
        return cls(filler=size, declare_length=declare_length)

    @classmethod
    def garbage(cls, data: bytes = b"\x9c\x80{\xc3\x28 not text \xff") -> Scripted:
        """Bytes that are not UTF-8 (nor any JSON encoding), sent as the body."""
        return cls(raw=data)

    def dribble(self, every_s: float = 1.0, *, head: bool = False) -> Scripted:
        """The same reply, its body sent one byte every ``every_s`` seconds (each read is
        quick, the whole takes ``len(body) × every_s``); ``head``: the status line and headers
        too (the client is stuck before it sees a response at all)."""
        return dataclasses.replace(self, every_s=every_s, dribble_head=head)

    def slow(self, delay_s: float) -> Scripted:
        """The same reply, after ``delay_s``."""
        return dataclasses.replace(self, delay_s=delay_s)


def chunk(delta: dict[str, Any], *, finish: str | None = None) -> dict[str, Any]:
    """One ``chat.completion.chunk`` event with this delta."""
    return {
        "id": "chatcmpl-scripted",
        "object": "chat.completion.chunk",
        "model": "scripted",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }


def nested(depth: int) -> str:
    """JSON arrays nested ``depth`` deep (``[[[…]]]``): valid JSON no parser should recurse on."""
    return "[" * depth + "]" * depth


def completion(content: str | None, tool_calls: list[dict[str, Any]] | None = None) -> Any:
    """An OpenAI chat-completion body with one choice."""
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if tool_calls:
        message["tool_calls"] = tool_calls
    return {
        "id": "chatcmpl-scripted",
        "object": "chat.completion",
        "model": "scripted",
        "choices": [
            {
                "index": 0,
                "message": message,
                "finish_reason": "tool_calls" if tool_calls else "stop",
            }
        ],
    }
