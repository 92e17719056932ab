"""The paho client of a door: its identity, credentials, and ending its session at a clean stop.

The client id is stable (``anima-<prefix>`` unless ``mqtt.client_id`` says otherwise): the
broker keeps a persistent session only for the same id. Two robots on one broker have
different prefixes, so different ids; two runtimes with the *same* prefix would take the
session over from each other, over and over — the door warns when its connections keep being
cut within a second of connecting.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Any

from anima.config import MqttConfig
from anima.wire.mqtt import BrokerAddress, door_client

log = logging.getLogger(__name__)

SHORT_LINK_S = 1.0  # connections cut sooner than this, 3 in a row: another client has our id


class ShortLinks:
    """Counts the connections the broker cut within :data:`SHORT_LINK_S` of their start, in a
    row: three mean another client uses this door's client id (the broker drops the older)."""

    def __init__(self, config: MqttConfig, client_id: str) -> None:
        self.config, self.client_id = config, client_id
        self._since = 0.0
        self.in_a_row = 0

    def connected(self) -> None:
        self._since = time.monotonic()

    def cut(self) -> bool:
        """A connection ended: True when this one makes three short ones in a row (or more);
        the third is logged."""
        lasted = time.monotonic() - self._since
        self.in_a_row = self.in_a_row + 1 if lasted < SHORT_LINK_S else 0
        if self.in_a_row == 3:
            log.warning(
                "MQTT: the broker cut 3 connections in a row within %g s: another client "
                "probably uses the client id %r (another anima with prefix %r?)",
                SHORT_LINK_S,
                self.client_id,
                self.config.prefix,
            )
        return self.in_a_row >= 3


def restart_loop(client: Any, address: BrokerAddress, keepalive_s: int) -> None:
    """Start paho's network thread again after it ended (joined first), on a fresh connection."""
    client.loop_stop()  # joins the dead thread
    # the dead thread left paho's wake-up socket pair open, and loop_start makes a new one over
    # it without closing it: closed here, or each restart leaks two sockets
    client._reset_sockets(sockpair_only=True)
    # a fresh connection: the broker sees the old one end without a DISCONNECT and publishes
    # the will ("offline") until the new subscription says "online"
    client.connect_async(address.host, address.port, keepalive_s)
    client.loop_start()


def end_session(config: MqttConfig, address: BrokerAddress, timeout: float = 1.0) -> bool:
    """Connect once with ``clean_session`` so the broker discards the door's session.

    Called after a clean stop: commands sent while the robot is switched off on purpose are
    not queued for its next start. False (logged) when the broker did not answer in time.
    """
    ended = threading.Event()
    client = door_client(config, clean_session=True)
    client.connect_timeout = timeout  # a broker that vanished must not hold the stop
    client.on_connect = lambda *_args: ended.set()
    try:
        client.connect(address.host, address.port, keepalive=config.keepalive_s)
        client.loop_start()
        ok = ended.wait(timeout)
        client.disconnect()
        client.loop_stop()
    except OSError as exc:
        log.info("could not end the MQTT session on %s: %s", address, exc)
        return False
    if not ok:
        log.info("could not end the MQTT session on %s: no CONNACK in %g s", address, timeout)
    return ok
