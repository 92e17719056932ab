"""Fan-out of live state and events to WebSocket clients.

Events arrive on the event hub's thread; each is turned into JSON once and handed to every
client's queue on the server's event loop (``call_soon_threadsafe``). Each client's queue is
bounded: a client too slow to keep up loses messages (counted), never the robot's time.
"""

from __future__ import annotations

import contextlib
import json
import logging
import threading
from typing import TYPE_CHECKING

from anima.wire.jsontypes import JsonObject

if TYPE_CHECKING:
    import asyncio

log = logging.getLogger(__name__)

QUEUE_LIMIT = 512  # messages waiting for one client; more are dropped


_encoded: list[tuple[JsonObject, str]] = []  # the last message encoded, and its text


def dumps(message: JsonObject) -> str:
    """Compact JSON. The message encoded last is remembered by identity: the state message is
    one object shared by every client in a period (``WebFrontDoor.state_message``), encoded
    once for all of them rather than once each. The slot holds the object, so its id cannot
    be reused by another; messages are never changed once made."""
    last = _encoded[0] if _encoded else None
    if last is not None and last[0] is message:
        return last[1]
    text = json.dumps(message, separators=(",", ":"), allow_nan=False, default=str)
    _encoded[:] = [(message, text)]  # one slice assignment: a reader sees old or new
    return text


class Client:
    """One WebSocket connection's outgoing queue, filled on the server's event loop."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        import asyncio  # loaded: the server runs on it (not imported before the first tick)

        self.loop = loop
        self.queue: asyncio.Queue[str] = asyncio.Queue(QUEUE_LIMIT)
        self.dropped = 0

    def put(self, text: str) -> None:
        """Called on the event loop."""
        import asyncio  # loaded (the loop calls this)

        try:
            self.queue.put_nowait(text)
        except asyncio.QueueFull:
            self.dropped += 1


class Clients:
    """The connected clients; events are broadcast to all of them from any thread."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._clients: list[Client] = []

    def add(self, client: Client) -> None:
        with self._lock:
            self._clients.append(client)

    def remove(self, client: Client) -> None:
        with self._lock:
            if client in self._clients:
                self._clients.remove(client)

    def __len__(self) -> int:
        with self._lock:
            return len(self._clients)

    def broadcast(self, text: str) -> None:
        """Queue ``text`` for every client; safe from any thread, never blocks. One wake-up
        of each event loop for all its clients, not one per client."""
        with self._lock:
            clients = list(self._clients)
        by_loop: dict[asyncio.AbstractEventLoop, list[Client]] = {}
        for c in clients:
            by_loop.setdefault(c.loop, []).append(c)
        for loop, theirs in by_loop.items():
            # RuntimeError: that loop is closing, its clients are going away
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(_put_all, theirs, text)


def _put_all(clients: list[Client], text: str) -> None:
    for c in clients:
        c.put(text)
