"""Scripted LLM servers on 127.0.0.1: real HTTP, replies from a script, requests recorded.

:class:`ScriptedOpenAIServer` plays ``POST /v1/chat/completions`` and :class:`ScriptedDifyServer`
plays ``POST /v1/chat-messages``. Each request takes the next :class:`Scripted` reply: a JSON
body, an HTTP error, a body that is not JSON, optionally after a delay (for timeouts and slow
replies). With the script empty, the server answers HTTP 500 "no scripted reply".

Streamed replies (server-sent events, as ``stream: true`` asks): :meth:`Scripted.sse` sends any
events with a delay before each; :meth:`Scripted.stream_text` (content pieces),
:meth:`Scripted.stream_tools` (content pieces, then tool calls whose arguments arrive in pieces)
and :meth:`Scripted.stream_json` (the seed's JSON reply, ``actions`` first, cut in pieces) build
them. The server notes when each event went out (:attr:`ScriptedOpenAIServer.sent`), to measure
from the moment a sentence was complete.

Hostile replies, to test that a client survives a server that misbehaves:
:meth:`Scripted.huge` (a reply of any size, generated while it is sent, never held whole),
:meth:`Scripted.dribble` (a byte at a time, seconds apart), :meth:`Scripted.garbage` (bytes
that are not UTF-8 text) and :func:`nested` (JSON nested to any depth). ::

    with ScriptedOpenAIServer([Scripted.tool_calls(("play_animation", {"name": "nod"}))]) as srv:
        planner = OpenAIPlanner(registry, base_url=srv.base_url, model="test")
        reply = planner.plan("nod please")
        assert srv.requests[0].body["messages"][-1]["content"] == "nod please"

Built on :mod:`http.server` in a thread the server owns; ``stop()`` wakes delayed replies and
joins it.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import threading
import time
from collections import deque
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
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


@dataclass(frozen=True)
class Recorded:
    """One request the server received."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any  # the decoded JSON body (None when it was not JSON)


@dataclass
class _State:
    script: deque[Scripted] = field(default_factory=deque)
    requests: list[Recorded] = field(default_factory=list)
    sent: list[tuple[float, Any]] = field(default_factory=list)  # (monotonic time, SSE data)
    lock: threading.Lock = field(default_factory=threading.Lock)
    stopping: threading.Event = field(default_factory=threading.Event)
    answered: threading.Condition = field(default_factory=threading.Condition)


class _ScriptedServer:
    path = "/"

    def __init__(self, script: Iterable[Scripted] = ()) -> None:
        self._state = _State(script=deque(script))
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # ------------------------------------------------------------------ script and record
    def push(self, *replies: Scripted) -> None:
        with self._state.lock:
            self._state.script.extend(replies)

    @property
    def requests(self) -> list[Recorded]:
        with self._state.lock:
            return list(self._state.requests)

    @property
    def sent(self) -> list[tuple[float, Any]]:
        """Every streamed event so far: (``time.monotonic()`` when written, its data)."""
        with self._state.lock:
            return list(self._state.sent)

    def wait_for_requests(self, count: int, timeout: float = 5.0) -> bool:
        """Block until ``count`` requests have arrived (True) or ``timeout`` passes."""
        with self._state.answered:
            return self._state.answered.wait_for(
                lambda: len(self._state.requests) >= count, timeout
            )

    # ------------------------------------------------------------------ lifecycle
    @property
    def port(self) -> int:
        if self._server is None:
            raise RuntimeError("the scripted server is not started")
        return int(self._server.server_address[1])

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:PORT/v1``, what a client is configured with."""
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> _ScriptedServer:
        handler = _handler(self._state, self.path, self._fill)
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever,
            kwargs={"poll_interval": 0.05},
            name="anima-scripted-llm",
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        server, thread = self._server, self._thread
        if server is None:
            return
        self._state.stopping.set()  # delayed replies give up now
        server.shutdown()
        server.server_close()
        if thread is not None:
            thread.join(2.0)
        self._server = self._thread = None

    def _fill(self, body: Any, request: Any) -> Any:
        return body

    def __enter__(self) -> Any:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()


class ScriptedOpenAIServer(_ScriptedServer):
    """``POST /v1/chat/completions`` answered from the script."""

    path = "/v1/chat/completions"

    def __enter__(self) -> ScriptedOpenAIServer:
        self.start()
        return self


class ScriptedDifyServer(_ScriptedServer):
    """``POST /v1/chat-messages`` answered from the script; a new conversation gets an id
    ``conv-N`` unless the scripted answer names one, a known one is echoed back."""

    path = "/v1/chat-messages"

    def __init__(self, script: Iterable[Scripted] = ()) -> None:
        super().__init__(script)
        self._ids = itertools.count(1)

    def __enter__(self) -> ScriptedDifyServer:
        self.start()
        return self

    def _fill(self, body: Any, request: Any) -> Any:
        if not isinstance(body, dict) or "answer" not in body or "conversation_id" in body:
            return body
        given = request.get("conversation_id") if isinstance(request, dict) else None
        return {**body, "conversation_id": given or f"conv-{next(self._ids)}"}


def _handler(state: _State, path: str, fill: Any) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            """Quiet: tests read ``requests`` instead."""

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            data = self.rfile.read(length)
            try:
                body = json.loads(data) if data else None
            except ValueError:
                body = None
            with state.lock:
                state.requests.append(
                    Recorded(
                        "POST", self.path, {k.lower(): v for k, v in self.headers.items()}, body
                    )
                )
                reply = state.script.popleft() if state.script else None
            with state.answered:
                state.answered.notify_all()
            if self.path != path:
                self._send(404, json.dumps({"error": f"no route {self.path}"}))
                return
            if reply is None:
                self._send(500, json.dumps({"error": {"message": "no scripted reply"}}))
                return
            if reply.delay_s and state.stopping.wait(reply.delay_s):
                self.close_connection = True  # the server is stopping: hang up unanswered
                return
            if reply.events is not None:
                self._stream(reply.status, reply.events)
                return
            if reply.filler:
                size, chunks = _huge_body(reply.filler)
                self._send(
                    reply.status, chunks, size if reply.declare_length else None, reply.headers
                )
                return
            raw = reply.raw if reply.raw is not None else json.dumps(fill(reply.body, body))
            payload = raw.encode() if isinstance(raw, str) else raw
            if reply.every_s and reply.dribble_head:
                self._dribble_all(reply.status, payload, reply.every_s)
                return
            if reply.every_s:
                parts: Iterator[bytes] = _dribbled(payload, reply.every_s, state.stopping)
            else:
                parts = iter((payload,))
            declared = len(payload) if reply.declare_length else None
            self._send(reply.status, parts, declared, reply.headers)

        def _stream(self, status: int, events: tuple[tuple[float, Any], ...]) -> None:
            self.close_connection = True
            try:
                self.send_response(status)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Cache-Control", "no-cache")
                self.send_header("Connection", "close")  # the body ends when the link closes
                self.end_headers()
                self.wfile.flush()
                for delay, data in events:
                    if delay and state.stopping.wait(delay):
                        return
                    text = data if isinstance(data, str) else json.dumps(data)
                    self.wfile.write(f"data: {text}\n\n".encode())
                    self.wfile.flush()
                    with state.lock:
                        state.sent.append((time.monotonic(), data))
            except OSError:
                pass  # the client gave up (an interrupt): stop sending

        def _dribble_all(self, status: int, payload: bytes, every_s: float) -> None:
            self.close_connection = True
            head = (
                f"HTTP/1.1 {status} Scripted\r\nContent-Type: application/json\r\n"
                f"Content-Length: {len(payload)}\r\nConnection: close\r\n\r\n"
            )
            try:
                for part in _dribbled(head.encode() + payload, every_s, state.stopping):
                    self.wfile.write(part)
                    self.wfile.flush()
            except OSError:
                pass  # the client gave up: stop sending

        def _send(
            self,
            status: int,
            text: str | Iterator[bytes],
            length: int | None = 0,
            extra: tuple[tuple[str, str], ...] = (),
        ) -> None:
            if isinstance(text, str):
                payload = text.encode()
                parts, length = iter((payload,)), len(payload)
            else:
                parts = text
            try:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                for name, value in extra:
                    self.send_header(name, value)
                if length is not None:
                    self.send_header("Content-Length", str(length))
                self.send_header("Connection", "close")  # no idle keep-alive threads at stop
                self.end_headers()
                self.close_connection = True
                for part in parts:
                    self.wfile.write(part)
                    self.wfile.flush()
            except OSError:
                pass  # the client gave up (a timeout or a refused reply): stop sending

    return Handler


_HUGE_HEAD = (
    b'{"id": "chatcmpl-scripted", "object": "chat.completion", "model": "scripted", '
    b'"choices": [{"index": 0, "message": {"role": "assistant", '
    b'"content": "{\\"response\\": \\"'
)
_HUGE_TAIL = b'\\", \\"actions\\": []}"}, "finish_reason": "stop"}]}'
_BLOCK = (b"Sure thing. " * 5462)[:65536]  # sentences, so a bounded reply can cut at one


def _huge_body(filler: int) -> tuple[int, Iterator[bytes]]:
    """(total length, the body in 64 KiB parts): a completion whose content is a JSON reply
    with a ``response`` of ``filler`` bytes."""

    def parts() -> Iterator[bytes]:
        yield _HUGE_HEAD
        left = filler
        while left > 0:
            yield _BLOCK[: min(left, len(_BLOCK))]
            left -= len(_BLOCK)
        yield _HUGE_TAIL

    return len(_HUGE_HEAD) + filler + len(_HUGE_TAIL), parts()


def _dribbled(payload: bytes, every_s: float, stopping: threading.Event) -> Iterator[bytes]:
    """``payload`` one byte at a time, ``every_s`` apart; ends early when the server stops."""
    for i in range(len(payload)):
        if i and stopping.wait(every_s):
            return
        yield payload[i : i + 1]
