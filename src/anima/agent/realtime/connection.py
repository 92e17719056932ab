"""The session's WebSocket, kept open: a reader thread that connects, reads and reconnects, and
a writer thread that sends, both owned by :class:`Connection` (``stop`` ends them in bounded
time).

The reader reads with a short timeout, so a stalled server is noticed (``on_idle`` is told how
long nothing came) and ``stop`` is never stuck on a socket. A lost socket (closed, reset,
``session.closed``: the session's owner calls :meth:`Connection.drop`) is reported once
(``on_lost``) and the reader connects again after an exponential backoff, jittered (half to
the whole of ``reconnect_s`` × 2^attempt, at most ``reconnect_max_s``), reset by a connection
that opens. The writer sends in order; what is queued while no socket is open is dropped (a
new session starts from nothing), and microphone audio is dropped past :data:`MAX_QUEUED` so a
slow server never grows memory.

``websockets`` (the ``realtime`` extra) is imported when the connection starts.
"""

from __future__ import annotations

import json
import logging
import queue
import random
import re
import threading
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from anima.agent.realtime.protocol import MAX_MESSAGE_BYTES, WireError, decode
from anima.errors import MissingDependencyError
from anima.wire.jsontypes import JsonObject

if TYPE_CHECKING:
    from websockets.sync.client import ClientConnection

log = logging.getLogger(__name__)

READ_POLL_S = 0.1  # the reader's longest wait for a message: how soon stop and stalls are seen
OPEN_TIMEOUT_S = 10.0  # the handshake
MAX_QUEUED = 400  # messages waiting to be sent (~13 s of microphone at 32 ms a frame)


def require_websockets() -> None:
    """Import ``websockets`` now (at start), or say how to install it."""
    try:
        import websockets.sync.client  # noqa: F401
    except ImportError as exc:
        raise MissingDependencyError("websockets", "realtime") from exc


class Connection:
    """One realtime session's socket, reconnected until :meth:`stop`."""

    def __init__(
        self,
        url: str,
        headers: Mapping[str, str],
        *,
        on_event: Callable[[dict[str, Any]], None],
        on_open: Callable[[], None],
        on_lost: Callable[[str], None],
        on_idle: Callable[[float], None],
        reconnect_s: float = 0.5,
        reconnect_max_s: float = 30.0,
        rng: random.Random | None = None,
        decode: Callable[[str | bytes], dict[str, Any]] = decode,
    ) -> None:
        """``decode``: a server message as an event, WireError when unreadable (the protocol's:
        OpenAI's by default)."""
        self._url = url
        self.url = redacted(url)  # what logs show: a key in the query (Google's) is hidden
        self._headers = dict(headers)
        self._on_event, self._on_open, self._on_lost, self._on_idle = (
            on_event,
            on_open,
            on_lost,
            on_idle,
        )
        self.reconnect_s, self.reconnect_max_s = reconnect_s, reconnect_max_s
        self._rng = rng or random.Random()
        self._decode = decode
        self._renewing: str | None = None  # why the open socket is being replaced (reconnect)
        self._ws: ClientConnection | None = None
        self._out: queue.Queue[str | None] = queue.Queue()
        self._stopping = threading.Event()
        self._reader: threading.Thread | None = None
        self._writer: threading.Thread | None = None
        self.opened = 0  # connections opened so far
        self.skipped = 0  # messages skipped as unreadable

    @property
    def open(self) -> bool:
        return self._ws is not None

    # ------------------------------------------------------------------ lifecycle
    def start(self) -> None:
        require_websockets()
        self._stopping.clear()
        self._reader = threading.Thread(target=self._read_loop, name="anima-realtime-read")
        self._writer = threading.Thread(target=self._write_loop, name="anima-realtime-write")
        self._reader.daemon = self._writer.daemon = True
        self._reader.start()
        self._writer.start()

    def stop(self, timeout: float = 2.0) -> None:
        self._stopping.set()
        self._out.put(None)
        ws = self._ws
        if ws is not None:
            ws.close()
        deadline = time.monotonic() + timeout
        for thread in (self._reader, self._writer):
            if thread is not None:
                thread.join(max(0.0, deadline - time.monotonic()))
                if thread.is_alive():
                    log.warning("realtime: %s did not stop within %g s", thread.name, timeout)
        self._reader = self._writer = None

    def drop(self, reason: str) -> None:
        """Close the socket (the server ended the session): the reader reconnects."""
        ws = self._ws
        if ws is not None:
            log.warning("realtime: closing the session: %s", reason)
            ws.close()

    def reconnect(self, reason: str) -> None:
        """Replace the socket now (the server said it will close it: Gemini's ``goAway``): no
        ``on_lost``, no backoff; a new session opens at once."""
        ws = self._ws
        if ws is not None:
            log.info("realtime: opening a new session: %s", reason)
            self._renewing = reason
            ws.close()

    # ------------------------------------------------------------------ sending
    def send(self, event: JsonObject, *, droppable: bool = False) -> bool:
        """Queue ``event`` for the open socket; False (dropped) when none is open, or when it
        is ``droppable`` (microphone audio) and the queue is full."""
        if self._ws is None or self._stopping.is_set():
            return False
        if droppable and self._out.qsize() >= MAX_QUEUED:
            return False
        self._out.put(json.dumps(event, separators=(",", ":")))
        return True

    def _write_loop(self) -> None:
        from websockets.exceptions import ConnectionClosed

        while True:
            text = self._out.get()
            if text is None:
                return
            ws = self._ws
            if ws is None:
                continue  # the session it was for is gone
            try:
                ws.send(text)
            except (ConnectionClosed, OSError) as exc:
                log.debug("realtime: a send was lost with the socket: %s", exc)

    # ------------------------------------------------------------------ reading
    def _read_loop(self) -> None:
        attempt = 0
        while not self._stopping.is_set():
            ws = self._connect()
            if ws is None:
                attempt += 1
                self._backoff(attempt)
                continue
            attempt = 0
            reason = self._session(ws)
            if self._stopping.is_set():
                return
            if self._renewing is not None:
                self._renewing = None
                continue
            try:
                self._on_lost(reason)
            except Exception:
                log.exception("realtime: on_lost failed")
            self._backoff(1)

    def _connect(self) -> ClientConnection | None:
        from websockets.exceptions import InvalidHandshake, InvalidURI
        from websockets.sync.client import connect

        try:
            ws = connect(
                self._url,
                additional_headers=self._headers,
                max_size=MAX_MESSAGE_BYTES,
                open_timeout=OPEN_TIMEOUT_S,
                close_timeout=1.0,
            )
        except (OSError, TimeoutError, InvalidHandshake, InvalidURI) as exc:
            log.warning("realtime: cannot connect to %s: %s", self.url, exc)
            return None
        log.info("realtime: connected to %s", self.url)
        return ws

    def _session(self, ws: ClientConnection) -> str:
        """Read ``ws`` until it closes; why it did."""
        from websockets.exceptions import ConnectionClosed

        # drop what was queued for an earlier socket before this one is visible to senders
        while not self._out.empty():
            try:
                self._out.get_nowait()
            except queue.Empty:
                break
        self._ws = ws
        self.opened += 1
        try:
            self._on_open()
        except Exception:
            log.exception("realtime: on_open failed")
        last = time.monotonic()
        try:
            while not self._stopping.is_set():
                try:
                    message = ws.recv(timeout=READ_POLL_S, decode=False)  # json reads bytes
                except TimeoutError:
                    self._idle(time.monotonic() - last)
                    continue
                last = time.monotonic()
                self._message(message)
        except ConnectionClosed as exc:
            reason = _closed(exc)
        except OSError as exc:
            reason = f"socket error: {exc}"
        else:
            reason = "stopped"
        finally:
            self._ws = None
            ws.close()
        return reason

    def _message(self, message: str | bytes) -> None:
        try:
            event = self._decode(message)
        except WireError as exc:
            self.skipped += 1
            log.warning("realtime: skipped a server message (%d bytes): %s", len(message), exc)
            return
        try:
            self._on_event(event)
        except Exception:  # one bad event must not end the session
            log.exception("realtime: handling %s failed", str(event.get("type"))[:60])

    def _idle(self, seconds: float) -> None:
        try:
            self._on_idle(seconds)
        except Exception:
            log.exception("realtime: on_idle failed")

    def _backoff(self, attempt: int) -> None:
        self._stopping.wait(backoff_s(attempt, self.reconnect_s, self.reconnect_max_s, self._rng))


def backoff_s(attempt: int, first: float, most: float, rng: random.Random) -> float:
    """The wait before connection ``attempt`` (1, 2, …): ``first`` × 2^(attempt-1), at most
    ``most``, jittered to between half and all of it (clients that lost one server together
    do not come back together)."""
    ceiling: float = min(most, first * 2.0 ** min(attempt - 1, 30))
    return ceiling * rng.uniform(0.5, 1.0)


def redacted(url: str) -> str:
    """``url`` with a secret in its query (``key=``, ``access_token=``) replaced by ``***``."""
    return re.sub(r"([?&](?:key|access_token)=)[^&#]*", r"\1***", url)


def _closed(exc: Exception) -> str:
    rcvd = getattr(exc, "rcvd", None)
    if rcvd is not None:
        return f"closed by the server ({rcvd.code}{': ' + rcvd.reason if rcvd.reason else ''})"
    return f"connection lost ({exc})"
