"""A scripted OpenAI-flavoured Realtime server on 127.0.0.1: a real WebSocket, replies from a
script, every client event recorded — for tests, and for trying a realtime brain offline.

The script maps a client event's type to the replies for its next occurrences: each reply is a
list of :data:`Action` (an event to send, raw text, a pause, a dropped socket). A client event
whose type has no reply left gets the default (``response.create``: an empty response,
``response.created`` then ``response.done``; anything else: nothing). Every connection starts
with ``session.created``. :meth:`ScriptedRealtimeServer.push` sends now, to the open connection
(a test's barge-in: ``speech_started``). ::

    with ScriptedRealtimeServer({"response.create": [answer(audio=pcm, call=("play_animation",
                                 {"name": "nod"}))]}) as server:
        settings = RealtimePlannerConfig(url=server.url)
        ...
        server.wait_for("conversation.item.create")

Hostile actions, to show a client survives a server that misbehaves: :class:`Raw` (truncated
JSON, bytes, a 10 MB audio delta: :func:`huge_delta`), :class:`Pause` (a stalled server),
:class:`Drop` (the socket closed with no close frame). Built on ``websockets``' sync server in a
thread the server owns; ``stop()`` closes every connection and joins it.
"""

from __future__ import annotations

import base64
import contextlib
import itertools
import json
import socket
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from types import TracebackType
from typing import TYPE_CHECKING, Any, TypeAlias

if TYPE_CHECKING:
    from websockets.sync.server import Server, ServerConnection


@dataclass(frozen=True)
class Raw:
    """Send this text (or bytes) as it is: not JSON, truncated JSON, a huge message."""

    data: str | bytes


@dataclass(frozen=True)
class Pause:
    """Send nothing for ``seconds`` (a stalled server)."""

    seconds: float


@dataclass(frozen=True)
class Drop:
    """Close the socket without a close frame (a lost connection)."""


Action: TypeAlias = "dict[str, Any] | Raw | Pause | Drop"
Reply: TypeAlias = list[Action]

_ids = itertools.count(1)


def audio_delta(pcm16: bytes, *, item_id: str, response_id: str = "resp_1") -> dict[str, Any]:
    """``response.output_audio.delta`` carrying ``pcm16`` (24 kHz mono)."""
    return {
        "type": "response.output_audio.delta",
        "response_id": response_id,
        "item_id": item_id,
        "output_index": 0,
        "content_index": 0,
        "delta": base64.b64encode(pcm16).decode("ascii"),
    }


def huge_delta(megabytes: float = 10.0, *, item_id: str = "item_huge") -> Raw:
    """An audio delta of ``megabytes`` of base64 in one message (hostile)."""
    delta = "A" * int(megabytes * 1024 * 1024)
    head = f'{{"type":"response.output_audio.delta","item_id":"{item_id}","delta":"'
    return Raw(head + delta + '"}')


def function_call(
    name: str, arguments: Mapping[str, Any] | str, *, call_id: str | None = None
) -> dict[str, Any]:
    """``response.function_call_arguments.done`` for one call."""
    args = arguments if isinstance(arguments, str) else json.dumps(dict(arguments))
    return {
        "type": "response.function_call_arguments.done",
        "item_id": f"item_fc{next(_ids)}",
        "call_id": call_id or f"call_{next(_ids)}",
        "name": name,
        "arguments": args,
    }


def answer(
    *,
    audio: bytes = b"",
    transcript: str = "",
    calls: Iterable[dict[str, Any]] = (),
    chunk_ms: int = 100,
    pace_s: float = 0.0,
    item_id: str | None = None,
) -> Reply:
    """One whole response: created, the audio in ``chunk_ms`` deltas (``pace_s`` apart) with
    the transcript, the tool calls, done."""
    rid = f"resp_{next(_ids)}"
    item = item_id or f"item_{next(_ids)}"
    reply: Reply = [{"type": "response.created", "response": {"id": rid, "status": "in_progress"}}]
    if transcript:
        reply.append(
            {"type": "response.output_audio_transcript.delta", "item_id": item, "delta": transcript}
        )
    step = 24 * 2 * chunk_ms  # bytes of 24 kHz PCM16 per chunk
    for start in range(0, len(audio), step):
        reply.append(audio_delta(audio[start : start + step], item_id=item, response_id=rid))
        if pace_s:
            reply.append(Pause(pace_s))
    if audio:
        reply.append({"type": "response.output_audio.done", "item_id": item, "response_id": rid})
    reply.extend(calls)
    reply.append({"type": "response.done", "response": {"id": rid, "status": "completed"}})
    return reply


@dataclass(frozen=True)
class Flavour:
    """What differs between the protocols a scripted server speaks."""

    path: str  # the URL's path
    greeting: tuple[dict[str, Any], ...]  # sent when a client connects
    kind: Callable[[dict[str, Any]], str]  # a message's kind (the script's keys)
    default: Callable[[str], Reply]  # the reply to a client message with none scripted


def _type(event: dict[str, Any]) -> str:
    return str(event.get("type", "?"))


@dataclass(frozen=True)
class Received:
    """One client event the server received, on which connection (1 = the first)."""

    connection: int
    type: str
    event: dict[str, Any]
    t: float  # time.monotonic() on arrival


class ScriptedRealtimeServer:
    """A Realtime server on 127.0.0.1 (a free port) playing a script; see the module doc."""

    def __init__(
        self,
        script: Mapping[str, Iterable[Reply]] | None = None,
        *,
        hear: Callable[[dict[str, Any]], list[dict[str, Any]]] | None = None,
        flavour: Flavour | None = None,
    ) -> None:
        """``hear``: the server's own replies to each client event before the script's (its
        ears: :class:`~anima.testing.realtime_ears.ServerEars` hears the microphone);
        ``flavour``: the protocol (OpenAI Realtime's by default; Gemini Live's:
        :func:`anima.testing.gemini_server.ScriptedGeminiServer`)."""
        self.flavour = flavour or OPENAI
        self._hear = hear
        self._script: dict[str, deque[Reply]] = {
            kind: deque(replies) for kind, replies in (script or {}).items()
        }
        self.received: list[Received] = []
        self.headers: list[dict[str, str]] = []  # each connection's request headers
        self.paths: list[str] = []  # each connection's request path (with the query)
        self.sent: list[tuple[float, str]] = []  # (time.monotonic() just before, event type)
        self._cond = threading.Condition()
        self._server: Server | None = None
        self._thread: threading.Thread | None = None
        self._current: ServerConnection | None = None
        self._connections: list[ServerConnection] = []
        self.port = 0

    @property
    def url(self) -> str:
        return f"ws://127.0.0.1:{self.port}{self.flavour.path}"

    # ------------------------------------------------------------------ lifecycle
    def start(self) -> ScriptedRealtimeServer:
        from websockets.sync.server import serve

        self._server = serve(self._handle, "127.0.0.1", 0, max_size=None)
        self.port = self._server.socket.getsockname()[1]
        self._thread = threading.Thread(
            target=self._server.serve_forever, name="realtime-server", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
        with self._cond:
            connections = list(self._connections)
        for ws in connections:
            _abort(ws)
        if self._thread is not None:
            self._thread.join(5.0)
        self._server = self._thread = None

    def __enter__(self) -> ScriptedRealtimeServer:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    # ------------------------------------------------------------------ the script
    def add(self, kind: str, *replies: Reply) -> None:
        """More replies for the next client events of ``kind``."""
        with self._cond:
            self._script.setdefault(kind, deque()).extend(replies)

    def push(self, *actions: Action) -> None:
        """Send now, on the open connection (AssertionError when none is)."""
        ws = self._current
        assert ws is not None, "no client is connected"
        self._play(ws, list(actions))

    # ------------------------------------------------------------------ what came
    def of(self, kind: str) -> list[Received]:
        with self._cond:
            return [r for r in self.received if r.type == kind]

    def wait_for(self, kind: str, count: int = 1, timeout: float = 5.0) -> list[Received]:
        """The first ``count`` client events of ``kind``, waiting up to ``timeout`` seconds
        (AssertionError after)."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while True:
                found = [r for r in self.received if r.type == kind]
                if len(found) >= count:
                    return found[:count]
                left = deadline - time.monotonic()
                if left <= 0:
                    seen = [r.type for r in self.received][-12:]
                    raise AssertionError(f"{count} × {kind} never came; last seen: {seen}")
                self._cond.wait(left)

    @property
    def connected(self) -> int:
        """Connections open now (a client's close ends its handler)."""
        with self._cond:
            return len(self._connections)

    def wait_connections(self, count: int, timeout: float = 5.0) -> None:
        deadline = time.monotonic() + timeout
        with self._cond:
            while len(self.headers) < count:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError(f"{count} connections never came ({len(self.headers)})")
                self._cond.wait(left)

    # ------------------------------------------------------------------ the connection
    def _handle(self, ws: ServerConnection) -> None:
        from websockets.exceptions import ConnectionClosed

        request = ws.request
        assert request is not None  # the handler runs after the handshake
        with self._cond:
            self.headers.append({k.lower(): v for k, v in request.headers.raw_items()})
            self.paths.append(request.path)
            index = len(self.headers)
            self._connections.append(ws)
            self._current = ws
            self._cond.notify_all()
        try:
            self._play(ws, list(self.flavour.greeting))
            for message in ws:
                try:
                    event = json.loads(message)
                    kind = self.flavour.kind(event)
                except (ValueError, KeyError, TypeError, AttributeError, StopIteration):
                    event, kind = {"raw": str(message)[:200]}, "?"
                with self._cond:
                    self.received.append(Received(index, kind, event, time.monotonic()))
                    self._cond.notify_all()
                    replies = self._script.get(kind)
                    reply = replies.popleft() if replies else self.flavour.default(kind)
                if self._hear is not None:
                    reply = [*self._hear(event), *reply]
                if not self._play(ws, reply):
                    return
        except (ConnectionClosed, OSError):
            return
        finally:
            with self._cond:
                if self._current is ws:
                    self._current = None
                self._connections.remove(ws)

    def _play(self, ws: ServerConnection, actions: list[Action]) -> bool:
        """Carry out ``actions``; False when the socket was dropped."""
        for action in actions:
            if isinstance(action, Drop):
                _abort(ws)
                return False
            if isinstance(action, Pause):
                time.sleep(action.seconds)
            elif isinstance(action, Raw):
                self._note("raw")
                ws.send(action.data)
            else:
                self._note(self.flavour.kind(action))  # before: the client may answer at once
                ws.send(json.dumps(action))
        return True

    def _note(self, kind: str) -> None:
        with self._cond:
            self.sent.append((time.monotonic(), kind))
            self._cond.notify_all()


def _default(kind: str) -> Reply:
    if kind == "response.create":
        return answer()
    if kind == "session.update":
        return [{"type": "session.updated", "session": {"type": "realtime"}}]
    return []


def _abort(ws: ServerConnection) -> None:
    """Close the TCP connection with no close frame."""
    with contextlib.suppress(OSError):
        ws.socket.shutdown(socket.SHUT_RDWR)
    ws.socket.close()


OPENAI = Flavour(
    path="/v1/realtime",
    greeting=({"type": "session.created", "session": {"type": "realtime"}},),
    kind=_type,
    default=_default,
)
