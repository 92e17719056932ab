"""A second MQTT connection that hears only ``<prefix>/agent/control/estop``.

The door's own connection delivers messages in order: under a flood, thousands of them can wait
ahead of an estop (in the broker's queue for the door, in its socket, in paho), and the stop
would wait seconds behind them. This lane's connection subscribes to the estop topic alone, so
its copy of an estop arrives at once; the dispatcher runs it before anything else and flushes
what waits.

The door's connection still carries every estop, in order, and runs it again: an estop is
idempotent, and the resets come only through the door's connection, so the end state is what
the sequence of messages says (estop, reset, estop leaves the robot stopped; estop, reset
leaves it released). The lane only makes stops happen sooner, never later, and never undoes one.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any

from anima.config import MqttConfig
from anima.wire.mqtt import BrokerAddress, door_client

log = logging.getLogger(__name__)

SUFFIX = "-estop"  # the lane's client id: the door's, with this suffix


class EstopLane:
    """Calls ``on_estop(payload)`` for each message on ``topic``; ``start()``/``stop()`` own it."""

    def __init__(
        self,
        config: MqttConfig,
        address: BrokerAddress,
        topic: str,
        on_estop: Callable[[bytes], None],
    ) -> None:
        self.config = config
        self.address = address
        self.topic = topic
        self._on_estop = on_estop
        self._client: Any = None
        self._subscribed = threading.Event()
        self._subscription = -1
        self.heard = 0  # estops this lane delivered

    @property
    def connected(self) -> bool:
        """Connected and subscribed: an estop published now reaches the runtime at once."""
        return self._subscribed.is_set()

    def start(self) -> None:
        client = door_client(self.config, clean_session=True, suffix=SUFFIX)
        client.reconnect_delay_set(0.25, 2)  # seconds (floats work)
        client.on_connect = self._on_connect
        client.on_subscribe = self._on_subscribe
        client.on_disconnect = self._on_disconnect
        client.on_message = self._on_message
        self._client = client
        client.connect_async(self.address.host, self.address.port, self.config.keepalive_s)
        client.loop_start()

    def stop(self) -> None:
        client, self._client = self._client, None
        self._subscribed.clear()
        if client is not None:
            client.disconnect()
            client.loop_stop()

    # paho callbacks: each keeps its exceptions (paho's thread would end with one)
    def _on_connect(self, client: Any, _u: Any, _f: Any, reason: Any, _p: Any) -> None:
        try:
            if not reason.is_failure:
                _rc, self._subscription = client.subscribe(self.topic, qos=1)
        except Exception:
            log.exception("MQTT estop lane: subscribing failed")

    def _on_subscribe(self, _c: Any, _u: Any, mid: int, reasons: Any, _p: Any) -> None:
        if mid == self._subscription and not any(r.is_failure for r in reasons):
            self._subscribed.set()
            log.debug("MQTT estop lane: hearing %s", self.topic)

    def _on_disconnect(self, _c: Any, _u: Any, _f: Any, _reason: Any, _p: Any) -> None:
        self._subscribed.clear()

    def _on_message(self, _client: Any, _userdata: Any, msg: Any) -> None:
        try:
            if msg.topic == self.topic:
                self.heard += 1
                self._on_estop(bytes(msg.payload))
        except Exception:  # the door's own copy of the estop still comes, in order
            log.exception("MQTT estop lane: handling an estop failed")
