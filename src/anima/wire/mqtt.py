"""MQTT as every anima client speaks it: broker addresses and the one client factory.

The door, its estop lane, the SDK (``Robot.connect("mqtt://…")``), the remote ears (``anima
agent``) and the test probe all make their paho client with :func:`new_client`, so each
reaches a broker that wants a user name and password, or TLS, from the same settings
(:class:`~anima.config.MqttConfig`'s ``username``, ``password``, ``tls_ca``, ``tls_cert``,
``tls_key``).
"""

from __future__ import annotations

import ssl
from dataclasses import dataclass
from typing import Any

from anima.config import MqttConfig
from anima.errors import ConfigError, MissingDependencyError


@dataclass(frozen=True)
class BrokerAddress:
    host: str
    port: int

    def __str__(self) -> str:
        return f"{self.host}:{self.port}"

    @classmethod
    def parse(cls, text: str) -> BrokerAddress:
        host, sep, port = text.strip().rpartition(":")
        if not sep or not host:
            raise ConfigError(f"broker {text!r}: expected HOST:PORT")
        try:
            number = int(port)
        except ValueError:
            raise ConfigError(f"broker {text!r}: port {port!r} is not a number") from None
        if not 0 < number < 65536:
            raise ConfigError(f"broker {text!r}: port {number} out of range")
        return cls(host, number)


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
