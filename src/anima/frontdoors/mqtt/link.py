"""The paho client of a door: its identity, credentials, and ending its session at a clean stop.

The client id is stable (``anima-<prefix>`` unless ``mqtt.client_id`` says otherwise): the
broker keeps a persistent session only for the same id. Two robots on one broker have
different prefixes, so different ids; two runtimes with the *same* prefix would take the
session over from each other, over and over — the door warns when its connections keep being
cut within a second of connecting.
"""

from __future__ import annotations

import logging
import ssl
import threading
from typing import Any

from anima.config import MqttConfig
from anima.errors import ConfigError, MissingDependencyError
from anima.frontdoors.mqtt.broker import BrokerAddress

log = logging.getLogger(__name__)


def client_id(config: MqttConfig) -> str:
    return config.client_id or f"anima-{config.prefix}"


def new_client(config: MqttConfig, *, clean_session: bool, suffix: str = "") -> Any:
    """A paho 2 client with the door's id (+ ``suffix``), credentials and TLS; not connected."""
    try:
        import paho.mqtt.client as mqtt
        from paho.mqtt.enums import CallbackAPIVersion
    except ImportError as exc:
        raise MissingDependencyError("paho-mqtt", "mqtt") from exc
    client = mqtt.Client(
        CallbackAPIVersion.VERSION2,
        client_id=client_id(config) + suffix,
        clean_session=clean_session,
    )
    if config.username is not None:
        client.username_pw_set(config.username, config.password)
    if config.tls_ca is not None:
        client.tls_set(
            ca_certs=config.tls_ca,
            certfile=config.tls_cert,
            keyfile=config.tls_key,
            cert_reqs=ssl.CERT_REQUIRED,
        )
    return client


def tls_context(config: MqttConfig) -> ssl.SSLContext | None:
    """The door's TLS settings as a context (for probing candidates), or None without TLS."""
    if config.tls_ca is None:
        return None
    try:
        context = ssl.create_default_context(cafile=config.tls_ca)
        if config.tls_cert is not None:
            context.load_cert_chain(config.tls_cert, config.tls_key)
    except (OSError, ssl.SSLError) as exc:
        files = ", ".join(f for f in (config.tls_ca, config.tls_cert, config.tls_key) if f)
        reason = getattr(exc, "strerror", None) or str(exc)
        raise ConfigError(f"mqtt.tls_ca/tls_cert/tls_key ({files}): {reason}") from None
    return context


def end_session(config: MqttConfig, address: BrokerAddress, timeout: float = 1.0) -> bool:
    """Connect once with ``clean_session`` so the broker discards the door's session.

    Called after a clean stop: commands sent while the robot is switched off on purpose are
    not queued for its next start. False (logged) when the broker did not answer in time.
    """
    ended = threading.Event()
    client = new_client(config, clean_session=True)
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
