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

from anima.testing.llm_replies import Scripted, chunk, completion, nested

__all__ = [
    "Recorded",
    "Scripted",
    "ScriptedDifyServer",
    "ScriptedOpenAIServer",
    "chunk",
    "completion",
    "nested",
]


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
