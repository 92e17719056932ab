"""Brokers that answer, and amqtt: the in-process broker used where no Mosquitto is installed.

Which broker ``anima serve`` uses is decided in :mod:`anima.frontdoors.mqtt.choice`. The amqtt
broker runs its own asyncio loop on a thread this object owns, bound to loopback only.

It is the fallback only, with two amqtt 0.12 bugs worked around (``_fixed_broker``):

- a client that connects is sent the retained messages of *every* filter any client subscribed
  to. ``mosquitto_pub`` never reads them, so when it closes, its kernel resets the connection
  (unread data) and amqtt's stream raises that reset before the PUBLISH already in its buffer
  is read: the command was lost (under ``anima serve``, whose status and state are retained,
  1–2 of 5 in some runs);
- a connection whose session failed to start, or that was cancelled at shutdown, is never
  closed (its socket left to the garbage collector, a ``ResourceWarning``); one closed with
  bytes still unsent to a peer that stopped reading stays "closing" for ever. Here every
  connection is closed when its handler ends, and those still open at ``stop()`` are aborted.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import re
import socket
import threading
from concurrent.futures import Future
from typing import Any

from anima.errors import ConfigError, MissingDependencyError
from anima.wire.jsontypes import JsonObject
from anima.wire.mqtt import BrokerAddress

log = logging.getLogger(__name__)


def answers(address: BrokerAddress, timeout: float = 0.3) -> bool:
    """True when something accepts a TCP connection there (anything: see ``probe`` for MQTT)."""
    try:
        with socket.create_connection((address.host, address.port), timeout=timeout):
            return True
    except OSError:
        return False


_SPARE_PORTS = (20000, 32767)  # below Linux's ephemeral range (32768-60999 by default)


def free_port(host: str = "127.0.0.1") -> int:
    """A port on ``host`` nothing listens on now, for a server started a little later.

    Picked at random below the kernel's ephemeral range, so the outgoing connections made in
    the meantime (which take ephemeral ports) cannot take it first; the kernel's own choice
    when ten picks were all in use."""
    for _ in range(10):
        port = random.randint(*_SPARE_PORTS)
        with socket.socket() as s:
            try:
                s.bind((host, port))
            except OSError:
                continue
            return port
    with socket.socket() as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])


CLOSE_S = 2.0  # a closed connection's time to send what it has buffered, then it is aborted


async def _close(writer: asyncio.StreamWriter) -> None:
    """Close a connection, giving it :data:`CLOSE_S` to send what it has buffered; aborted
    after that, on a reset, or when the wait ends otherwise (amqtt's own timed wait cancels the
    close waiter all waits share; a stop cancels this one)."""
    writer.close()
    try:
        await asyncio.wait_for(writer.wait_closed(), CLOSE_S)
    except (Exception, asyncio.CancelledError):
        writer.transport.abort()


def _fixed_broker(base: type[Any]) -> type[Any]:
    """amqtt's ``Broker``, sending a client only the retained messages it subscribed to, and
    closing every connection it accepted.

    amqtt 0.12, at every connect, offers the new client the retained messages of all the
    broker's subscription filters, its own or not. Here a filter the client does not hold
    is skipped. Private amqtt API, pinned by ``test_mqtt_broker_choice.py``.

    Each accepted connection's writer is kept until its handler has closed it (given
    :data:`CLOSE_S` to send what is buffered, then aborted); :meth:`abort_connections` ends
    those still open, at stop.
    """

    class Broker(base):  # type: ignore[misc]  # amqtt is untyped
        _anima_writers: set[asyncio.StreamWriter]

        async def _publish_retained_messages_for_subscription(
            self, subscription: tuple[str, int], session: Any
        ) -> None:
            subscribers = self._subscriptions.get(subscription[0], [])
            if all(s.client_id != session.client_id for s, _qos in subscribers):
                return  # someone else's filter
            await super()._publish_retained_messages_for_subscription(subscription, session)

        async def stream_connected(
            self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, listener_name: str
        ) -> None:
            writers = self.__dict__.setdefault("_anima_writers", set())
            writers.add(writer)
            stopped = False
            try:
                await super().stream_connected(reader, writer, listener_name)
            except asyncio.CancelledError:
                # stopped: the connection ends here, and so does its task (one that ended
                # cancelled makes asyncio 3.11's stream callback log a false error)
                stopped = True
            finally:
                try:
                    if stopped:
                        writer.transport.abort()
                    else:
                        await _close(writer)
                finally:
                    writers.discard(writer)

        def abort_connections(self) -> int:
            """End every connection still open now (on the broker's loop); how many."""
            writers = self.__dict__.get("_anima_writers", set())
            for writer in list(writers):
                writer.transport.abort()
            count = len(writers)
            writers.clear()
            return count

    return Broker


class _FloodQuieter(logging.Filter):
    """amqtt logs a traceback per message it gives up on: 13,000 in a 20k-message flood.

    Here each kind of amqtt record (its text with the numbers taken out) passes 3 times, then
    once per 1000, without its traceback: the log stays readable and bounded.
    """

    def __init__(self) -> None:
        super().__init__()
        self._seen: dict[str, int] = {}

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno < logging.WARNING:
            return True
        kind = re.sub(r"\d+", "#", record.getMessage())[:80]
        count = self._seen[kind] = self._seen.get(kind, 0) + 1
        if count > 3 and count % 1000:
            return False
        record.exc_info = None
        record.exc_text = None
        if count > 3:
            record.msg = f"{record.getMessage()} (×{count} so far)"
            record.args = ()
        return True


_QUIETER = _FloodQuieter()


async def _finish_leftovers(broker: Any) -> None:
    """On a broker's loop after its shutdown: cancel the tasks still there, abort the
    connections still open, and give the transports the loop turns that close their sockets."""
    here = asyncio.current_task()
    left = [task for task in asyncio.all_tasks() if task is not here]
    for task in left:
        task.cancel()
    await asyncio.gather(*left, return_exceptions=True)
    broker.abort_connections()
    for _ in range(3):
        await asyncio.sleep(0)


class EmbeddedBroker:
    """amqtt in-process, on 127.0.0.1 only; ``start()``/``stop()`` own its thread and loop."""

    def __init__(self, port: int = 1883, host: str = "127.0.0.1") -> None:
        if host not in ("127.0.0.1", "localhost", "::1"):
            raise ConfigError(f"the embedded broker binds loopback only, not {host!r}")
        self.address = BrokerAddress("127.0.0.1" if host == "localhost" else host, port)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._broker: Any = None

    def _config(self) -> JsonObject:
        # our own config: the packaged default binds 0.0.0.0:1883
        return {
            "listeners": {"default": {"type": "tcp", "bind": str(self.address)}},
            "plugins": {
                "amqtt.plugins.authentication.AnonymousAuthPlugin": {"allow_anonymous": True},
            },
        }

    def prepare(self) -> None:
        """Nothing more to load: amqtt was imported with this module's broker class."""

    def start(self, timeout: float = 5.0) -> None:
        try:
            from amqtt.broker import Broker
        except ImportError as exc:
            raise MissingDependencyError("amqtt", "mqtt") from exc
        if self._thread is not None:
            return
        for name in ("amqtt.broker", "amqtt.mqtt.protocol.handler"):
            if _QUIETER not in logging.getLogger(name).filters:
                logging.getLogger(name).addFilter(_QUIETER)
        loop = asyncio.new_event_loop()
        started: Future[None] = Future()

        async def boot() -> None:
            self._broker = _fixed_broker(Broker)(self._config(), loop=loop)
            await self._broker.start()

        def run() -> None:
            asyncio.set_event_loop(loop)
            try:
                loop.run_until_complete(boot())
            except BaseException as exc:  # report start failures to start()
                started.set_exception(exc)
                return
            started.set_result(None)
            loop.run_forever()

        self._loop = loop
        self._thread = threading.Thread(target=run, name="anima-mqtt-broker", daemon=True)
        self._thread.start()
        try:
            started.result(timeout)
        except Exception as exc:
            self._thread.join(1.0)
            self._thread = None
            raise ConfigError(
                f"embedded MQTT broker could not start on {self.address}: {exc}"
            ) from exc
        log.info("embedded MQTT broker on %s", self.address)

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def stop(self, timeout: float = 5.0) -> None:
        loop, thread = self._loop, self._thread
        if loop is None or thread is None:
            return
        if self._broker is not None:
            fut = asyncio.run_coroutine_threadsafe(self._broker.shutdown(), loop)
            with contextlib.suppress(Exception):
                fut.result(timeout)
            # what amqtt left: its clients' tasks, and connections it began to close (a
            # transport closes on the loop's next turn: stopped before it, the socket leaked)
            fut = asyncio.run_coroutine_threadsafe(_finish_leftovers(self._broker), loop)
            with contextlib.suppress(Exception):
                fut.result(timeout)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout)
        loop.close()
        self._thread = None
        self._loop = None
