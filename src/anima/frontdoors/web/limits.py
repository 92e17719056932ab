"""A request body bound, enforced before the body is read.

Starlette's ``await request.body()`` reads a whole body into memory, whatever its size: a
100 MB POST cost 160 MB before the parsers' 64 KiB check refused it. This ASGI middleware sits
in front of every route and refuses with 413:

- at once, on a ``Content-Length`` over the limit, without reading a byte of the body;
- for a body without one (chunked), as soon as what arrived passes the limit: it stops reading.

A refusal closes the connection (``Connection: close``), so uvicorn drops the rest of the body
instead of reading it; its flow control has paused reading meanwhile, so the unread part never
sits in memory. A body within the limit is read here, once, and handed to the route as is.
"""

from __future__ import annotations

from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from anima.frontdoors.state import PAYLOAD_VERSION


class BodyLimit:
    """Refuse HTTP request bodies over ``limit`` bytes (413), reading at most one chunk past it."""

    def __init__(self, app: ASGIApp, limit: int) -> None:
        self.app = app
        self.limit = limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":  # WebSocket frames are bounded by uvicorn's ws_max_size
            await self.app(scope, receive, send)
            return
        declared = _content_length(scope)
        if declared is not None:
            if not declared.isdigit():
                shown = declared[:20].decode("latin-1")
                await _refuse(scope, send, 400, f"Content-Length {shown!r} is not a byte count")
                return
            if len(declared) > 18 or int(declared) > self.limit:
                told = f"{int(declared)} bytes" if len(declared) <= 18 else "over 10^18 bytes"
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
                await _refuse(
                    scope, send, 413, f"a body of over {size} bytes exceeds {self._bound()}"
                )
                return
            chunks.append(body)
            if not message.get("more_body", False):
                break
        await self.app(scope, _replay(b"".join(chunks), receive), send)

    def _bound(self) -> str:
        return f"the {self.limit}-byte limit on request bodies"


def _content_length(scope: Scope) -> bytes | None:
    for name, value in scope["headers"]:
        if name == b"content-length":
            return bytes(value).strip()
    return None


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
