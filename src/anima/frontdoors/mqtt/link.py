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

from anima.config import MqttConfig
from anima.wire.mqtt import BrokerAddress, door_client

log = logging.getLogger(__name__)


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
