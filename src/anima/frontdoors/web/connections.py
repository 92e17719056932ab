"""Connection limits under uvicorn, where its own options leave a door open.

uvicorn bounds a connection's idle time between requests (``timeout_keep_alive``) and answers
503 past ``limit_concurrency``, but only to a complete request. A client that opens a socket and
never finishes its headers held a descriptor for ever: 1,100 of them, with the usual 1,024 open
files, deafened every door of the process (REST, WebSocket, MCP, MQTT's reconnects, Piper).

A :class:`Gate` is shared by every connection of one server:

- at most ``max_connections`` open at once, HTTP and WebSocket alike. At the cap a new
  connection takes the place of one that has no request under way (its headers not all in, or
  idle between requests): the oldest such of the client address holding the most connections,
  answered 503 and closed. So a client that sends its request at once is served while slow ones
  hold every place, and a flood from one address makes room from its own connections first.
  With no such connection (every one busy with a request or a WebSocket) the new one is answered
  503 and closed before anything of it is read;
- a request's headers must be in within ``header_timeout_s`` of the connection's opening or of
  its first byte (a keep-alive connection's next request), its body within ``body_timeout_s`` of
  its headers: else 408 (or, mid-body, a plain close);
- a client that reads nothing of what it is sent for ``write_stall_s`` (the transport's buffer
  stays full) is dropped: a WebSocket that never reads, a response nobody takes;
- descriptors running out when accepting (EMFILE: asyncio logs each retry with a traceback) are
  logged once, then counted.

Each of these is logged once (the first time), then counted in :class:`GateCounts`: a flood
must not become a flood of log lines.
"""

from __future__ import annotations

import collections
import errno
import logging
import socket
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the web extra's: imported by protocols(), so Gate needs none of it
    import asyncio

    from uvicorn.protocols.http.h11_impl import H11Protocol
    from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol

log = logging.getLogger(__name__)

# the errors of a process or system out of descriptors or buffers, when accepting
EXHAUSTED = frozenset({errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM})
WS_SEND_BUFFER = 32 * 1024  # bytes of a WebSocket's kernel send buffer (a second of state or so)


@dataclass(frozen=True, kw_only=True)
class GateCounts:
    """What the gate let in and turned away since the server started."""

    open: int  # connections open now (HTTP and WebSocket)
    refused: int  # connections closed at once: the cap was reached, every one busy
    evicted: int  # connections without a request under way, closed for a new one at the cap
    timed_out: int  # requests whose headers or body did not arrive in time
    stalled: int  # clients dropped for reading nothing of what they were sent
    accept_failures: int  # accepts that failed: the process or system out of descriptors


class Gate:
    """The limits shared by one server's connections; used on its event loop only."""

    def __init__(
        self,
        *,
        max_connections: int,
        header_timeout_s: float,
        body_timeout_s: float,
        write_stall_s: float,
    ) -> None:
        self.max_connections = max_connections
        self.header_timeout_s = header_timeout_s
        self.body_timeout_s = body_timeout_s
        self.write_stall_s = write_stall_s
        self.open = 0
        self.refused = 0
        self.evicted = 0
        self.timed_out = 0
        self.stalled = 0
        self.accept_failures = 0
        self._hosts: collections.Counter[str] = collections.Counter()  # open, per address
        # per address, connections with no request under way, oldest first: each one's
        # eviction (which counts it out); a dict keeps the order of insertion
        self._idle: dict[str, dict[object, Callable[[], None]]] = {}

    def counts(self) -> GateCounts:
        return GateCounts(
            open=self.open,
            refused=self.refused,
            evicted=self.evicted,
            timed_out=self.timed_out,
            stalled=self.stalled,
            accept_failures=self.accept_failures,
        )

    def idle(self, connection: object, host: str, evict: Callable[[], None]) -> None:
        """``connection`` (from ``host``) has no request under way: now the newest such."""
        theirs = self._idle.setdefault(host, {})
        theirs.pop(connection, None)
        theirs[connection] = evict

    def busy(self, connection: object, host: str) -> None:
        """``connection`` has a request under way, or is gone: it may not be evicted."""
        theirs = self._idle.get(host)
        if theirs is not None:
            theirs.pop(connection, None)
            if not theirs:
                del self._idle[host]

    def admit(self, host: str) -> bool:
        """Count a connection from ``host`` in; at the cap, in the place of the oldest idle
        one of the address holding most, or refuse it (False) when every one is busy."""
        if self.open >= self.max_connections and self._idle:
            most = max(self._idle, key=lambda h: self._hosts[h])
            theirs = self._idle[most]
            evict = theirs.pop(next(iter(theirs)))
            if not theirs:
                del self._idle[most]
            self.evicted += 1
            if self.evicted == 1:
                log.warning(
                    "web: %d connections open, the cap (web.max_connections): the oldest "
                    "without a request under way make room for new ones (counted from now on)",
                    self.open,
                )
            evict()  # counts it out (release)
        if self.open >= self.max_connections:
            self.refused += 1
            if self.refused == 1:
                log.warning(
                    "web: %d connections open, the cap (web.max_connections): new ones are "
                    "answered 503 and closed (counted from now on, in the status line)",
                    self.open,
                )
            return False
        self.open += 1
        self._hosts[host] += 1
        return True

    def release(self, host: str) -> None:
        self.open -= 1
        self._hosts[host] -= 1
        if self._hosts[host] <= 0:
            del self._hosts[host]

    def timed_out_one(self, what: str) -> None:
        self.timed_out += 1
        if self.timed_out == 1:
            log.warning(
                "web: a client's request %s did not arrive in time: connection closed "
                "(web.header_timeout_s, web.body_timeout_s; counted from now on)",
                what,
            )

    def stalled_one(self) -> None:
        self.stalled += 1
        if self.stalled == 1:
            log.warning(
                "web: a client read nothing of what it was sent for %g s: dropped "
                "(web.write_stall_s; counted from now on)",
                self.write_stall_s,
            )

    def on_loop_exception(self, loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        """The server loop's exception handler: an accept failing for want of descriptors is
        logged once and counted (asyncio logs each one with its traceback, a retry a second
        per listening socket, for as long as it lasts); the rest go to asyncio's handler."""
        exc = context.get("exception")
        if isinstance(exc, OSError) and exc.errno in EXHAUSTED:
            self.accept_failures += 1
            if self.accept_failures == 1:
                log.error(
                    "web: cannot accept connections: %s (the process is out of descriptors; "
                    "retrying each second, counted from now on)",
                    exc.strerror or exc,
                )
            return
        loop.default_exception_handler(context)


def _raw_response(status: bytes, body: bytes) -> bytes:
    return (
        b"HTTP/1.1 " + status + b"\r\ncontent-type: text/plain; charset=utf-8\r\n"
        b"connection: close\r\ncontent-length: " + str(len(body)).encode() + b"\r\n\r\n" + body
    )


REFUSED = _raw_response(b"503 Service Unavailable", b"too many connections open: try later\n")
TIMED_OUT = _raw_response(b"408 Request Timeout", b"the request's headers came too slowly\n")


def peer_host(transport: asyncio.BaseTransport) -> str:
    """The client's address (its host, without the port); "" when there is none (a socket
    file)."""
    peer = transport.get_extra_info("peername")
    return str(peer[0]) if isinstance(peer, tuple) and peer else ""


def _close(transport: asyncio.BaseTransport) -> None:
    """Close now: a transport still holding unsent bytes (a client that does not read) would
    otherwise keep its descriptor until they are sent, that is for ever."""
    import asyncio  # loaded: the server runs on it

    if isinstance(transport, asyncio.WriteTransport) and transport.get_write_buffer_size():
        transport.abort()
    else:
        transport.close()


class StallWatch:
    """One connection's write stall: armed when its transport pauses writing (the client reads
    nothing), disarmed when it resumes; ``write_stall_s`` later the connection is aborted and
    counted."""

    def __init__(self) -> None:
        self._timer: asyncio.TimerHandle | None = None

    def paused(self, loop: asyncio.AbstractEventLoop, gate: Gate, transport: Any) -> None:
        if self._timer is None:
            self._timer = loop.call_later(gate.write_stall_s, self._stalled, gate, transport)

    def resumed(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _stalled(self, gate: Gate, transport: Any) -> None:
        self._timer = None
        gate.stalled_one()
        transport.abort()


def protocols(gate: Gate) -> tuple[type[H11Protocol], type[WebSocketsSansIOProtocol]]:
    """uvicorn's h11 HTTP and sans-I/O WebSocket protocols, each connection held to ``gate``.

    A WebSocket starts as an HTTP connection (counted in then) that uvicorn hands to the
    WebSocket protocol: that one counts it out when it is lost.
    """
    import h11
    from uvicorn.protocols.http.h11_impl import H11Protocol
    from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol

    class GuardedWebSocket(WebSocketsSansIOProtocol):
        _host = ""

        def connection_made(self, transport: asyncio.BaseTransport) -> None:
            self._stall = StallWatch()
            super().connection_made(transport)
            self._host = peer_host(transport)
            # a client that stops reading fills the kernel's buffer before asyncio's: bounded
            # (auto-tuned it grows to megabytes), a stall shows within seconds, not minutes
            sock = transport.get_extra_info("socket")
            if sock is not None:
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, WS_SEND_BUFFER)

        def connection_lost(self, exc: Exception | None) -> None:
            gate.release(self._host)
            self._stall.resumed()
            super().connection_lost(exc)

        def pause_writing(self) -> None:
            super().pause_writing()
            self._stall.paused(self.loop, gate, self.transport)

        def resume_writing(self) -> None:
            super().resume_writing()
            self._stall.resumed()

    class GuardedHttp(H11Protocol):
        _refused = False
        _released = False  # counted out already (evicted)
        _host = ""
        _upgraded = False
        _deadline: asyncio.TimerHandle | None = None
        _waiting_for = ""  # "headers" or "body" while a deadline runs

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            self._stall = StallWatch()
            self._host = peer_host(transport)
            if not gate.admit(self._host):
                self._refused = True
                transport.write(REFUSED)
                _close(transport)
                return
            super().connection_made(transport)
            self._expect("headers", gate.header_timeout_s)
            gate.idle(self, self._host, self._evict)

        def connection_lost(self, exc: Exception | None) -> None:
            if self._refused:
                return
            gate.busy(self, self._host)
            if not self._released:
                gate.release(self._host)
            self._cancel()
            self._stall.resumed()
            super().connection_lost(exc)

        def data_received(self, data: bytes) -> None:
            if self._deadline is None and self.conn.their_state is h11.IDLE:
                self._expect("headers", gate.header_timeout_s)  # the next request begins
            super().data_received(data)
            if self._upgraded:
                return
            state = self.conn.their_state
            if state is not h11.IDLE:
                gate.busy(self, self._host)  # a request under way
            if state is h11.SEND_BODY:
                if self._waiting_for == "headers":
                    self._expect("body", gate.body_timeout_s)
            elif state is not h11.IDLE:  # all of it in (or the connection ending)
                self._cancel()

        def on_response_complete(self) -> None:
            super().on_response_complete()
            if not self.transport.is_closing() and self.conn.their_state is h11.IDLE:
                gate.idle(self, self._host, self._evict)  # between requests
            pipelined = self.conn.trailing_data[0]  # part of the next request came with this one
            if pipelined and self._deadline is None and self.conn.their_state is h11.IDLE:
                self._expect("headers", gate.header_timeout_s)

        def handle_websocket_upgrade(self, event: h11.Request) -> None:
            self._upgraded = True  # now the WebSocket's: it counts the connection out
            gate.busy(self, self._host)
            self._cancel()
            self._stall.resumed()
            super().handle_websocket_upgrade(event)

        def pause_writing(self) -> None:
            super().pause_writing()
            self._stall.paused(self.loop, gate, self.transport)

        def resume_writing(self) -> None:
            super().resume_writing()
            self._stall.resumed()

        def _expect(self, what: str, within: float) -> None:
            self._cancel()
            self._waiting_for = what
            self._deadline = self.loop.call_later(within, self._expired)

        def _cancel(self) -> None:
            if self._deadline is not None:
                self._deadline.cancel()
                self._deadline = None
            self._waiting_for = ""

        def _expired(self) -> None:
            what = self._waiting_for
            self._deadline = None
            self._waiting_for = ""
            if self.transport.is_closing():
                return
            gate.timed_out_one(what)
            if what == "headers" and self.conn.our_state is h11.IDLE:
                self.transport.write(TIMED_OUT)  # nothing answered yet: say why
            _close(self.transport)

        def _evict(self) -> None:
            self._released = True
            gate.release(self._host)
            self._cancel()
            if self.transport.is_closing():
                return
            if self.conn.our_state is h11.IDLE:
                self.transport.write(REFUSED)  # nothing answered on it yet: say why
            _close(self.transport)

    return GuardedHttp, GuardedWebSocket
