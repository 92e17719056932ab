"""A request body bound, enforced before the body is kept.

Starlette's ``await request.body()`` reads a whole body into memory, whatever its size: a
100 MB POST cost 200 MB of peak RSS before the parsers' 64 KiB check refused it. This ASGI
middleware sits in front of every route and refuses a body over the limit with 413:

- on a ``Content-Length`` over the limit, before the body is kept: a body larger than
  :data:`DRAIN` is not read at all;
- for a body without one (chunked), as soon as what arrived passes the limit.

Then the connection is closed (``Connection: close``). Closing a socket with unread data makes
the kernel answer with a reset, which can destroy the 413 before a client that sends its whole
body before reading (httpx, requests) has read it. So, as web servers do ("lingering close"), up
to :data:`DRAIN` bytes of a refused body are read and dropped chunk by chunk before answering;
past that the server stops reading and closes. Nothing of a refused body is kept: memory stays
flat whatever is sent. A body within the limit is read here, once, and handed to the route.

A request with both ``Content-Length`` and ``Transfer-Encoding`` is refused with 400 (h11 accepts
it, framing the body by the latter: a request smuggling hazard behind a proxy that uses the
former). :class:`WebSocketCap` bounds the WebSocket clients served at once.
"""

from __future__ import annotations

import logging

from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from anima.wire import PAYLOAD_VERSION

log = logging.getLogger(__name__)

DRAIN = 1024 * 1024  # bytes of a refused body read and dropped, so the client hears the 413


class BodyLimit:
    """Refuse HTTP request bodies over ``limit`` bytes with 413, keeping none of them."""

    def __init__(self, app: ASGIApp, limit: int, drain: int = DRAIN) -> None:
        self.app = app
        self.limit = limit
        self.drain = drain

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":  # WebSocket frames are bounded by uvicorn's ws_max_size
            await self.app(scope, receive, send)
            return
        declared = _content_length(scope)
        if declared is not None and _header(scope, b"transfer-encoding") is not None:
            # h11 frames such a body by Transfer-Encoding; a proxy in front may frame it by
            # Content-Length: what one takes for a body the other takes for a request
            reason = "Content-Length with Transfer-Encoding (request smuggling): send one of them"
            await _refuse(scope, send, 400, reason)
            return
        if declared is not None:
            if not declared.isdigit():
                shown = declared[:20].decode("latin-1")
                await _refuse(scope, send, 400, f"Content-Length {shown!r} is not a byte count")
                return
            length = int(declared) if len(declared) <= 18 else None  # None: absurdly large
            if length is None or length > self.limit:
                small = length is not None and length <= self.drain
                if small and not await _drop(receive, self.drain):
                    return  # the client went away
                told = f"{length} bytes" if length is not None else "over 10^18 bytes"
                await _refuse(scope, send, 413, f"a body of {told} exceeds {self._bound()}")
                return
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":  # the client went away mid-body
                return
            body: bytes = message.get("body", b"")
            size += len(body)
            if size > self.limit:
                chunks.clear()
                more = message.get("more_body", False)
                if more and not await _drop(receive, self.drain - size):
                    return
                reason = f"a body of over {self.limit} bytes exceeds {self._bound()}"
                await _refuse(scope, send, 413, reason)
                return
            chunks.append(body)
            if not message.get("more_body", False):
                break
        await self.app(scope, _replay(b"".join(chunks), receive), send)

    def _bound(self) -> str:
        return f"the {self.limit}-byte limit on request bodies"


def _content_length(scope: Scope) -> bytes | None:
    return _header(scope, b"content-length")


def _header(scope: Scope, wanted: bytes) -> bytes | None:
    for name, value in scope["headers"]:
        if name == wanted:
            return bytes(value).strip()
    return None


async def _drop(receive: Receive, budget: int) -> bool:
    """Read and drop the rest of a body, at most ``budget`` bytes; False if the client left."""
    while budget > 0:
        message = await receive()
        if message["type"] == "http.disconnect":
            return False
        budget -= len(message.get("body", b""))
        if not message.get("more_body", False):
            break
    return True


def _replay(body: bytes, receive: Receive) -> Receive:
    """A ``receive`` giving the body read already, then the connection's own messages
    (a route may wait on it for ``http.disconnect``)."""
    pending = True

    async def replayed() -> Message:
        nonlocal pending
        if pending:
            pending = False
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replayed


async def _refuse(scope: Scope, send: Send, status: int, reason: str) -> None:
    body = {"v": PAYLOAD_VERSION, "path": scope.get("path", ""), "reason": reason}
    response = JSONResponse(body, status_code=status, headers={"connection": "close"})

    async def no_body() -> Message:  # the response never reads the request
        return {"type": "http.disconnect"}

    await response(scope, no_body, send)


class WebSocketCap:
    """At most ``limit`` WebSocket connections served at once; one more is accepted and closed
    at once with 1013 (try again later) and a reason, so its client knows why. Each client
    costs a state message per tick: 200 that never read stalled the 100 Hz loop 154 ms."""

    def __init__(self, app: ASGIApp, limit: int) -> None:
        self.app = app
        self.limit = limit
        self.open = 0  # used on the server's event loop only: no lock
        self.refused = 0

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "websocket":
            await self.app(scope, receive, send)
            return
        if self.open >= self.limit:
            self.refused += 1
            if self.refused == 1:
                log.warning(
                    "web: %d WebSocket clients, the cap (web.max_ws_clients): more are closed "
                    "with 1013 (counted from now on)",
                    self.open,
                )
            if (await receive())["type"] == "websocket.connect":
                reason = f"too many clients: at most {self.limit} (web.max_ws_clients)"
                await send({"type": "websocket.accept"})
                await send({"type": "websocket.close", "code": 1013, "reason": reason})
            return
        self.open += 1
        try:
            await self.app(scope, receive, send)
        finally:
            self.open -= 1
