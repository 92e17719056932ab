"""MQTT as every anima client speaks it: broker addresses and the one client factory.

The door, its estop lane, the SDK (``Robot.connect("mqtt://…")``), the remote ears (``anima
agent``) and the test probe all make their paho client with :func:`new_client`, so each
reaches a broker that wants a user name and password, or TLS, from the same settings
(:class:`~anima.config.MqttConfig`'s ``username``, ``password``, ``tls_ca``, ``tls_cert``,
``tls_key``).
"""

from __future__ import annotations

import dataclasses
import ssl
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote, urlsplit

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


@dataclass(frozen=True, kw_only=True)
class Credentials:
    """How a client proves itself to a broker: a user name and password, and TLS (with
    ``tls_ca`` the broker's CA file; without one, the system's CAs)."""

    username: str | None = None
    password: str | None = None
    tls: bool = False
    tls_ca: str | None = None
    tls_cert: str | None = None  # a client certificate (with tls_key)
    tls_key: str | None = None

    @classmethod
    def of(cls, config: MqttConfig) -> Credentials:
        """The ``mqtt:`` section's credentials (TLS when it names a CA file)."""
        return cls(
            username=config.username,
            password=config.password,
            tls=config.tls_ca is not None,
            tls_ca=config.tls_ca,
            tls_cert=config.tls_cert,
            tls_key=config.tls_key,
        )

    def __repr__(self) -> str:  # never the password in a log line
        shown = "***" if self.password is not None else None
        return (
            f"Credentials(username={self.username!r}, password={shown}, tls={self.tls}, "
            f"tls_ca={self.tls_ca!r})"
        )


def client_id(config: MqttConfig) -> str:
    return config.client_id or f"anima-{config.prefix}"


def new_client(credentials: Credentials, *, client_id: str, clean_session: bool = True) -> Any:
    """A paho 2 client with ``credentials`` set (every anima client makes its client here:
    the door, its estop lane, the SDK, the remote ears, the test probe); not connected.
    ConfigError for a TLS file that cannot be read."""
    try:
        import paho.mqtt.client as mqtt
        from paho.mqtt.enums import CallbackAPIVersion
    except ImportError as exc:
        raise MissingDependencyError("paho-mqtt", "mqtt") from exc
    client = mqtt.Client(
        CallbackAPIVersion.VERSION2, client_id=client_id, clean_session=clean_session
    )
    if credentials.username is not None:
        client.username_pw_set(credentials.username, credentials.password)
    if credentials.tls:
        try:
            client.tls_set(
                ca_certs=credentials.tls_ca,
                certfile=credentials.tls_cert,
                keyfile=credentials.tls_key,
                cert_reqs=ssl.CERT_REQUIRED,
            )
        except (OSError, ssl.SSLError) as exc:
            files = [credentials.tls_ca, credentials.tls_cert, credentials.tls_key]
            shown = ", ".join(f for f in files if f) or "the system's CAs"
            reason = getattr(exc, "strerror", None) or str(exc)
            raise ConfigError(f"MQTT TLS ({shown}): {reason}") from None
    return client


def door_client(config: MqttConfig, *, clean_session: bool, suffix: str = "") -> Any:
    """The door's client: its stable id (+ ``suffix``) and the section's credentials."""
    return new_client(
        Credentials.of(config), client_id=client_id(config) + suffix, clean_session=clean_session
    )


def connack_reason(reason: Any) -> str:
    """A refused CONNACK in words that say what to fix."""
    text = str(reason)
    if "authorized" in text.lower() or "password" in text.lower():
        return f"{text} (check the user name and password: mqtt.username/password)"
    return text


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


# --- robot addresses as URLs: mqtt://[user[:password]@]host[:1883], mqtts://… (TLS, :8883)
def parse_url(url: str) -> tuple[str, int]:
    """``mqtt://host:1883`` (port 1883 when omitted; ``mqtts://``: TLS, port 8883) → (host,
    port). A user name and password in the URL are read by :func:`url_credentials`."""
    parts = urlsplit(url)
    if parts.scheme not in ("mqtt", "mqtts") or not parts.hostname:
        raise ConfigError(
            f"robot address {_hidden(url)!r}: expected mqtt://HOST[:PORT] or mqtts://HOST[:PORT]"
        )
    try:
        port = parts.port or (8883 if parts.scheme == "mqtts" else 1883)
    except ValueError:
        raise ConfigError(f"robot address {_hidden(url)!r}: bad port") from None
    return parts.hostname, port


def url_credentials(url: str, given: Credentials) -> Credentials:
    """``given`` with what the URL adds: ``user:password@`` and TLS for ``mqtts://``."""
    parts = urlsplit(url)
    changes: dict[str, Any] = {}
    if parts.username is not None and given.username is None:
        changes["username"] = unquote(parts.username)
        if parts.password is not None:
            changes["password"] = unquote(parts.password)
    if parts.scheme == "mqtts":
        changes["tls"] = True
    return dataclasses.replace(given, **changes) if changes else given


def _hidden(url: str) -> str:
    """``url`` without its password (for messages)."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    return url.replace(f":{parts.password}@", ":***@", 1)
