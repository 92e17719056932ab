"""An MQTT client for tests and benchmarks: publishes, and records what it receives, in order.

It is a real paho-mqtt 2 client on a real broker, so what it sees is what a robot's operator
would see. Every wait is bounded and raises :class:`TimeoutError` naming what was awaited::

    with MqttProbe(broker.address, subscribe="nadine/agent/#") as probe:
        mark = probe.mark()
        probe.publish("nadine/agent/control/animation", "nod", qos=1)
        done = probe.wait_for("nadine/agent/feedback/animation_done", since=mark, timeout=5)
        assert done.json()["name"] == "nod"
"""

from __future__ import annotations

import itertools
import json
import os
import socket
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from types import TracebackType
from typing import Any

from anima.wire.mqtt import BrokerAddress, Credentials, new_client

_ids = itertools.count(1)


@dataclass(frozen=True, slots=True)
class Message:
    """One message as received: ``t`` is ``time.monotonic()`` when paho handed it over."""

    topic: str
    payload: bytes
    retain: bool
    t: float

    def text(self) -> str:
        return self.payload.decode("utf-8")

    def json(self) -> Any:
        return json.loads(self.payload)


class MqttProbe:
    """A paho client that records every message on ``subscribe`` (a filter or several)."""

    def __init__(
        self,
        address: BrokerAddress,
        *,
        subscribe: str | Sequence[str] = (),
        client_id: str | None = None,
        history: int = 100_000,
        credentials: Credentials | None = None,
    ) -> None:
        self.address = address
        self.credentials = credentials or Credentials()
        self._filters = [subscribe] if isinstance(subscribe, str) else list(subscribe)
        self._client_id = client_id or f"anima-probe-{os.getpid()}-{next(_ids)}"
        self._history = history
        self._messages: list[Message] = []
        self._dropped = 0  # messages forgotten to keep ``history``
        self._cond = threading.Condition()
        self._ready = threading.Event()  # connected and every filter acknowledged
        self._acks: set[int] = set()
        self._client: Any = None
        self.connects = 0

    # ------------------------------------------------------------------ lifecycle
    def connect(self, timeout: float = 5.0) -> None:
        """Connect, subscribe, and return once the broker acknowledged the subscriptions."""
        client = new_client(self.credentials, client_id=self._client_id)
        client.reconnect_delay_set(0.1, 1)  # floats work (paho types them int)
        client.max_queued_messages_set(0)  # unbounded: a flood is queued, not refused
        client.on_connect = self._on_connect
        client.on_subscribe = self._on_subscribe
        client.on_disconnect = self._on_disconnect
        client.on_message = self._on_message
        self._client = client
        client.connect_async(self.address.host, self.address.port, keepalive=30)
        client.loop_start()
        if not self._ready.wait(timeout):
            self.close()
            raise TimeoutError(f"MQTT probe: no connection to {self.address} within {timeout} s")

    def wait_ready(self, timeout: float) -> bool:
        """After a broker restart: True once reconnected and resubscribed."""
        return self._ready.wait(timeout)

    def close(self) -> None:
        client, self._client = self._client, None
        if client is not None:
            client.disconnect()
            client.loop_stop()

    def __enter__(self) -> MqttProbe:
        self.connect()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    # ------------------------------------------------------------------ paho callbacks
    def _on_connect(self, client: Any, _u: Any, _f: Any, reason: Any, _p: Any) -> None:
        if reason.is_failure:
            return
        self.connects += 1
        sock = client.socket()
        if sock is not None:  # no Nagle delay on our small publishes
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        if not self._filters:
            self._ready.set()
            return
        _rc, mid = client.subscribe([(f, 1) for f in self._filters])
        with self._cond:
            self._acks.add(mid)

    def _on_subscribe(self, _c: Any, _u: Any, mid: int, _codes: Any, _p: Any) -> None:
        with self._cond:
            if mid in self._acks:
                self._acks.discard(mid)
                self._ready.set()

    def _on_disconnect(self, _c: Any, _u: Any, _f: Any, _reason: Any, _p: Any) -> None:
        self._ready.clear()

    def _on_message(self, _c: Any, _u: Any, msg: Any) -> None:
        m = Message(msg.topic, bytes(msg.payload), bool(msg.retain), time.monotonic())
        with self._cond:
            self._messages.append(m)
            if len(self._messages) > self._history:
                excess = len(self._messages) - self._history
                del self._messages[:excess]
                self._dropped += excess
            self._cond.notify_all()

    # ------------------------------------------------------------------ publishing
    def publish(
        self,
        topic: str,
        payload: bytes | str = b"",
        *,
        qos: int = 0,
        retain: bool = False,
        ack_timeout: float = 5.0,
    ) -> None:
        """Publish; with ``qos`` ≥ 1, return once the broker acknowledged it (``ack_timeout``
        s at most: a broker acknowledges in order, after what was sent before)."""
        client = self._client
        if client is None:
            raise RuntimeError("MQTT probe: publish() before connect()")
        info = client.publish(topic, payload, qos=qos, retain=retain)
        if qos > 0:
            info.wait_for_publish(ack_timeout)
            if not info.is_published():
                raise TimeoutError(f"MQTT probe: {topic} not acknowledged within {ack_timeout} s")

    # ------------------------------------------------------------------ reading
    def mark(self) -> int:
        """A position in the record: pass it as ``since`` to look only at what came after."""
        with self._cond:
            return self._dropped + len(self._messages)

    def messages(self, topic: str | None = None, *, since: int = 0) -> list[Message]:
        """Messages received so far (on ``topic`` only, when given), oldest first."""
        with self._cond:
            start = max(0, since - self._dropped)
            return [m for m in self._messages[start:] if topic is None or m.topic == topic]

    def wait_for(
        self,
        topic: str | None = None,
        *,
        since: int = 0,
        timeout: float = 5.0,
        where: Callable[[Message], bool] | None = None,
        count: int = 1,
    ) -> Message:
        """Block until ``count`` messages on ``topic`` matching ``where`` arrived after ``since``.

        Returns the ``count``-th; raises TimeoutError (listing what did arrive) otherwise.
        """
        deadline = time.monotonic() + timeout
        with self._cond:
            while True:
                start = max(0, since - self._dropped)
                found = [
                    m
                    for m in self._messages[start:]
                    if (topic is None or m.topic == topic) and (where is None or where(m))
                ]
                if len(found) >= count:
                    return found[count - 1]
                left = deadline - time.monotonic()
                if left <= 0:
                    seen = [f"{m.topic} {m.payload[:80]!r}" for m in self._messages[start:][-10:]]
                    raise TimeoutError(
                        f"MQTT probe: {len(found)}/{count} messages on {topic or 'any topic'} "
                        f"within {timeout:g} s; last received: {seen}"
                    )
                self._cond.wait(left)
