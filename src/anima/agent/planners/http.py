"""What the HTTP planners share: bounded, interruptible requests, error events, JSON over httpx.

A blocking HTTP request cannot be abandoned from another thread, so each one runs on a helper
thread and the caller waits on an event that the answer, :meth:`InflightCall.interrupt` or the
planner's whole-request deadline (``timeout_s``: connect, send and the whole body) ends; the
abandoned request's socket is then cut so its thread ends too (it is joined by ``close``).
Replies are read as they stream and refused past :data:`MAX_REPLY_BYTES`; every way the body
can fail to decode is a :class:`PlannerError` with a reason, never an exception of its own.
"""

from __future__ import annotations

import contextlib
import logging
import os
import socket
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from anima.agent.planners.base import json_value
from anima.errors import MissingDependencyError, PlannerError
from anima.events import CommandRejected, Publisher
from anima.wire.jsontypes import JsonObject
from anima.wire.tls import client_tls

if TYPE_CHECKING:
    import httpx

log = logging.getLogger(__name__)

T = TypeVar("T")

MAX_REPLY_BYTES = 1_000_000  # far above any real plan (a few KB); larger replies are refused
# one server-sent event (a chunk of a streamed reply: a few hundred bytes from real servers);
# larger is refused before it is decoded (a 900 kB event of small JSON values cost ~20 MB)
MAX_EVENT_BYTES = 256 * 1024


class HTTPStatusError(PlannerError):
    """The server answered with an HTTP error status."""

    def __init__(self, message: str, status: int) -> None:
        super().__init__(message)
        self.status = status


class RequestInterruptedError(Exception):
    """The request was released by interrupt(); its answer, if any, is dropped."""


@dataclass
class _Call(Generic[T]):
    wake: threading.Event = field(default_factory=threading.Event)
    finished: bool = False
    interrupted: bool = False
    value: T | None = None
    error: BaseException | None = None


class Link:
    """One request's connection, which another thread can cut (the deadline, an interrupt).

    httpx's timeouts bound each operation, not the request: a server that sends a byte every
    few seconds never trips them. The caller bounds the whole request instead, and cutting the
    socket (``shutdown``, which wakes a blocked read; ``close`` would not) makes the abandoned
    request end at once rather than whenever the server stops dribbling. The socket is learnt
    from httpcore's ``trace`` extension when the connection opens; requests never reuse a
    pooled connection (see :func:`new_client`), so every request opens one.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._socket: socket.socket | None = None
        self._cut = threading.Event()

    @property
    def is_cut(self) -> bool:
        return self._cut.is_set()

    def trace(self, name: str, info: dict[str, object]) -> None:
        """httpcore's trace hook: keep the socket of the connection this request opens."""
        if name != "connection.connect_tcp.complete":
            return
        stream = info.get("return_value")
        extra = getattr(stream, "get_extra_info", None)
        sock = extra("socket") if extra is not None else None
        if isinstance(sock, socket.socket):
            with self._lock:
                self._socket = sock
            if self._cut.is_set():
                self._shutdown(sock)

    def cut(self) -> None:
        self._cut.set()
        with self._lock:
            sock = self._socket
        if sock is not None:
            self._shutdown(sock)

    @staticmethod
    def _shutdown(sock: socket.socket) -> None:
        with contextlib.suppress(OSError):  # already closed: nothing left to cut
            sock.shutdown(socket.SHUT_RDWR)


class InflightCall:
    """Runs one blocking call at a time on a helper thread; the caller waits at most
    ``within`` seconds, and interrupt() releases it at once. Either way the call's
    :class:`Link` is cut so the helper thread ends promptly too."""

    def __init__(self, name: str) -> None:
        self._name = name
        self._lock = threading.Lock()
        self._current: tuple[_Call[Any], Link] | None = None
        self._threads: list[threading.Thread] = []

    def run(self, fn: Callable[[Link], T], *, within: float, what: str) -> T:
        """``fn(link)``'s value; PlannerError naming ``what`` when it takes over ``within`` s."""
        call: _Call[T] = _Call()
        link = Link()

        def work() -> None:
            try:
                call.value = fn(link)
            except BaseException as exc:  # handed to the caller's thread
                call.error = exc
            finally:
                call.finished = True
                call.wake.set()

        thread = threading.Thread(target=work, name=f"anima-{self._name}-request", daemon=True)
        with self._lock:
            self._threads = [t for t in self._threads if t.is_alive()]
            self._threads.append(thread)
            self._current = (call, link)
        thread.start()
        answered = call.wake.wait(within)
        with self._lock:
            self._current = None
        if call.interrupted:
            raise RequestInterruptedError
        if not answered:
            link.cut()
            raise PlannerError(f"no complete answer from {what} within the timeout ({within:g} s)")
        if call.error is not None:
            raise call.error
        return call.value  # type: ignore[return-value]  # set when finished without error

    def interrupt(self) -> None:
        with self._lock:
            current = self._current
        if current is not None:
            call, link = current
            call.interrupted = True
            call.wake.set()
            link.cut()

    def close(self, timeout: float) -> None:
        """Interrupt, then wait for the helper threads (each ends once its link is cut)."""
        self.interrupt()
        with self._lock:
            threads, self._threads = self._threads, []
        for thread in threads:
            thread.join(timeout)
            if thread.is_alive():
                log.warning("%s: a request thread is still waiting for its server", self._name)


def api_key(variable: str | None, default: str) -> str | None:
    """The key from the named environment variable (None when unset or empty)."""
    return os.environ.get(variable or default) or None


def report(events: Publisher | None, source: str, command: str, argument: str, reason: str) -> None:
    """Log a planner failure and publish it as a CommandRejected event (source ``agent``)."""
    log.warning("%s planner: %s", source, reason)
    if events is not None:
        events.publish(
            CommandRejected(
                command=command,
                argument=argument[:80],
                reason=f"{source} planner: {reason}",
                source="agent",
            )
        )


def new_client(timeout_s: float) -> httpx.Client:
    """An httpx client with one timeout for connect, read and write (no network until used).
    No connection is kept alive between requests: each request opens its own, which its
    :class:`Link` can cut without touching another's."""
    try:
        import httpx
    except ImportError:
        raise MissingDependencyError("httpx", "agent") from None
    return httpx.Client(
        timeout=httpx.Timeout(timeout_s),
        limits=httpx.Limits(max_keepalive_connections=0),
        verify=client_tls(),
    )


def post_json(
    client: httpx.Client,
    url: str,
    body: JsonObject,
    headers: dict[str, str],
    link: Link,
    *,
    max_bytes: int = MAX_REPLY_BYTES,
) -> Any:
    """POST ``body``; the decoded JSON answer, or PlannerError saying what went wrong.

    The answer is read as it streams: a Content-Length over ``max_bytes`` is refused before
    the body, and a body that grows past it is refused as soon as it does (never buffered
    whole). A cut ``link`` (the caller gave up) ends the read at the next chunk.
    """

    asked = {**headers, "Accept-Encoding": "identity"}  # the byte cap counts what is parsed
    with (
        _transport_errors(url, link, client.timeout.read),
        client.stream(
            "POST", url, json=body, headers=asked, extensions={"trace": link.trace}
        ) as answer,
    ):
        data = _read_capped(answer, url, link, max_bytes)
    return _decoded(answer.status_code, data, url)


@contextlib.contextmanager
def _transport_errors(url: str, link: Link, timeout_s: float | None) -> Iterator[None]:
    """httpx's failures as PlannerErrors that say what happened to the request (``timeout_s``:
    the client's read timeout, named when it ran out — as the caller's own deadline is, which
    the same figure and a loaded machine make either of the two to come first)."""
    import httpx

    try:
        yield
    except httpx.TimeoutException:
        within = "" if timeout_s is None else f" ({timeout_s:g} s)"
        raise PlannerError(f"no answer from {url} within the timeout{within}") from None
    except httpx.HTTPError as exc:
        if link.is_cut:
            raise PlannerError(f"request to {url} abandoned (deadline or interrupt)") from None
        raise PlannerError(f"request to {url} failed: {type(exc).__name__}: {exc}") from None


def _decoded(status: int, data: bytes, url: str) -> Any:
    """The JSON body of a whole answer; HTTPStatusError with an excerpt for an error status."""
    if status >= 400:
        text = data.decode("utf-8", "replace").strip().replace("\n", " ")
        detail = text if len(text) <= 120 else text[:120] + "…"
        raise HTTPStatusError(f"HTTP {status} from {url}: {detail}", status)
    return json_value(data, f"the body from {url}")


def _read_capped(answer: httpx.Response, url: str, link: Link, max_bytes: int) -> bytes:
    encoding = answer.headers.get("content-encoding", "identity").strip().lower()
    if encoding not in ("", "identity"):
        raise PlannerError(
            f"refused reply from {url}: it is compressed ({encoding[:20]!r}) although "
            "identity was asked"
        )
    declared = answer.headers.get("content-length", "").strip()
    if (
        declared.isascii()
        and declared.isdigit()
        and (len(declared) > 12 or int(declared) > max_bytes)
    ):
        shown = (
            f"{int(declared):,} bytes" if len(declared) <= 12 else f"a {len(declared)}-digit size"
        )
        raise PlannerError(
            f"refused reply from {url}: it announces {shown}, over the {max_bytes:,}-byte limit"
        )
    data = bytearray()
    for chunk in answer.iter_raw():
        if link.is_cut:
            raise PlannerError(f"request to {url} abandoned (deadline or interrupt)")
        data += chunk
        if len(data) > max_bytes:
            raise PlannerError(
                f"refused reply from {url}: over the {max_bytes:,}-byte limit "
                "(stopped reading there)"
            )
    return bytes(data)


def post_stream(
    client: httpx.Client,
    url: str,
    body: JsonObject,
    headers: dict[str, str],
    link: Link,
    *,
    on_event: Callable[[Any], None],
    max_bytes: int = MAX_REPLY_BYTES,
) -> Any:
    """POST ``body`` asking for server-sent events; each ``data:`` event, decoded, goes to
    ``on_event`` as it arrives (on this thread), until ``data: [DONE]`` or the end of the body.

    Returns None for a stream; a server that ignores ``stream`` and answers one JSON body gets
    that body returned instead (decoded like :func:`post_json`). The same bounds hold: at most
    ``max_bytes`` in all, a cut ``link`` ends the read at the next chunk, every failure is a
    PlannerError with a reason (an event that is not JSON names its number).
    """
    asked = {**headers, "Accept-Encoding": "identity", "Accept": "text/event-stream"}
    with (
        _transport_errors(url, link, client.timeout.read),
        client.stream(
            "POST", url, json=body, headers=asked, extensions={"trace": link.trace}
        ) as answer,
    ):
        kind = answer.headers.get("content-type", "").lower()
        if answer.status_code < 400 and "text/event-stream" in kind:
            _read_events(answer, url, link, max_bytes, on_event)
            return None
        data = _read_capped(answer, url, link, max_bytes)
    return _decoded(answer.status_code, data, url)


def _read_events(
    answer: httpx.Response,
    url: str,
    link: Link,
    max_bytes: int,
    on_event: Callable[[Any], None],
) -> None:
    """Split the body into SSE events as the bytes arrive (lines; a blank line ends an event,
    its ``data:`` lines joined) and hand each decoded one on.

    One event over :data:`MAX_EVENT_BYTES` (its data, or a line still without its end) is
    refused as soon as it is, before it is decoded. Each byte is looked at once: a line's end
    is sought only in the bytes that came since, and an event's data lines go into one
    buffer."""
    encoding = answer.headers.get("content-encoding", "identity").strip().lower()
    if encoding not in ("", "identity"):
        raise PlannerError(f"refused stream from {url}: it is compressed ({encoding[:20]!r})")
    pending = bytearray()  # bytes of lines not yet ended
    scanned = 0  # how much of pending is known to hold no line end
    data = bytearray()  # the data lines of the event being read, each with a b"\n" after it
    total = count = 0
    for chunk in answer.iter_raw():
        if link.is_cut:
            raise PlannerError(f"request to {url} abandoned (deadline or interrupt)")
        total += len(chunk)
        if total > max_bytes:
            raise PlannerError(
                f"refused stream from {url}: over the {max_bytes:,}-byte limit "
                "(stopped reading there)"
            )
        pending += chunk
        while (end := pending.find(b"\n", scanned)) >= 0:
            line = bytes(pending[:end]).rstrip(b"\r")
            del pending[: end + 1]
            scanned = 0
            if line.startswith(b"data:"):
                data += line[5:].removeprefix(b" ")
                data += b"\n"
                _event_bounded(len(data) - 1, count + 1, url)
                continue
            if line or not data:
                continue  # a comment, an id or event field, or a stray blank line
            event = bytes(data[:-1])
            data.clear()
            count += 1
            if event.strip() == b"[DONE]":
                _some_event(count - 1, url)
                return
            on_event(json_value(event, f"event {count} of the stream from {url}"))
        scanned = len(pending)
        _event_bounded(len(data) + len(pending), count + 1, url)
    last = bytes(data[:-1])
    if data and last.strip() != b"[DONE]":  # the last event, without its blank line
        on_event(json_value(last, f"the last event of the stream from {url}"))
        count += 1
    _some_event(count, url)


def _event_bounded(size: int, number: int, url: str) -> None:
    """PlannerError when event ``number`` has grown past :data:`MAX_EVENT_BYTES`."""
    if size > MAX_EVENT_BYTES:
        raise PlannerError(
            f"refused stream from {url}: event {number} is over the {MAX_EVENT_BYTES:,}-byte "
            "limit of one event (stopped reading there)"
        )


def _some_event(count: int, url: str) -> None:
    """A stream with no event (at most its ``[DONE]``) is no reply, not an empty one: said,
    so the robot apologizes instead of going silent."""
    if count == 0:
        raise PlannerError(f"the stream from {url} ended before any event (no reply)")
