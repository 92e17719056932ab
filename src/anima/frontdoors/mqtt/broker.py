"""Brokers that answer, and amqtt: the in-process broker used where no Mosquitto is installed.

Which broker ``anima serve`` uses is decided in :mod:`anima.frontdoors.mqtt.choice`. The amqtt
broker runs its own asyncio loop on a thread this object owns, bound to loopback only.

It is the fallback only, with one amqtt 0.12 bug worked around (``_own_subscriptions_only``):
a client that connects is sent the retained messages of *every* filter any client subscribed
to. ``mosquitto_pub`` never reads them, so when it closes, its kernel resets the connection
(unread data) and amqtt's stream raises that reset before the PUBLISH already in its buffer
is read: the command was lost (under ``anima serve``, whose status and state are retained,
1–2 of 5 in some runs).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
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


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket() as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])


def _own_subscriptions_only(base: type[Any]) -> type[Any]:
    """amqtt's ``Broker``, sending a client only the retained messages it subscribed to.

    amqtt 0.12, at every connect, offers the new client the retained messages of all the
    broker's subscription filters, its own or not. Here a filter the client does not hold
    is skipped. Private amqtt API, pinned by ``test_mqtt_broker_choice.py``.
    """

    class Broker(base):  # type: ignore[misc]  # amqtt is untyped
        async def _publish_retained_messages_for_subscription(
            self, subscription: tuple[str, int], session: Any
        ) -> None:
            subscribers = self._subscriptions.get(subscription[0], [])
            if all(s.client_id != session.client_id for s, _qos in subscribers):
                return  # someone else's filter
            await super()._publish_retained_messages_for_subscription(subscription, session)

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


async def _finish_leftovers() -> None:
    """On a broker's loop after its shutdown: cancel the tasks still there, and give the
    transports being closed the loop turns that close their sockets."""
    here = asyncio.current_task()
    left = [task for task in asyncio.all_tasks() if task is not here]
    for task in left:
        task.cancel()
    await asyncio.gather(*left, return_exceptions=True)
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
            self._broker = _own_subscriptions_only(Broker)(self._config(), loop=loop)
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
            fut = asyncio.run_coroutine_threadsafe(_finish_leftovers(), loop)
            with contextlib.suppress(Exception):
                fut.result(timeout)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout)
        loop.close()
        self._thread = None
        self._loop = None
