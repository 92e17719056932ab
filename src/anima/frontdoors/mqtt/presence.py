"""A robot's presence on a shared broker: who it is, how it is, and one prefix per robot.

Beyond Nadine's contract (docs/fleet.md), under the robot's prefix:

- ``<prefix>/agent/identity`` (retained, on each connect): its name, prefix, instance, anima's
  version, body, driver, host, pid and start time;
- ``<prefix>/agent/health`` (retained, once a second): :class:`anima.health.Health`;
- ``<prefix>/agent/ping`` → ``<prefix>/agent/pong``: ``{"nonce": …}`` answered with the
  nonce and the instance, so another process can tell a live robot from a retained one.

**One prefix, one robot.** Two runtimes with the same prefix would share every command and
take the broker's session from each other. Before the door connects, :func:`check_claim` looks
at the prefix's retained status and identity with a client of its own: when another instance
says it is online, it pings it, and a pong refuses this start with a clear message. A robot
that died without a word (its last will not yet published) answers no ping, and its prefix is
taken over. A running door that sees another instance's identity on its prefix says so.
"""

from __future__ import annotations

import datetime
import json
import logging
import os
import secrets
import socket
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from anima.config import MqttConfig
from anima.errors import ConfigError
from anima.version import __version__
from anima.wire.jsontypes import JsonObject
from anima.wire.mqtt import BrokerAddress, door_client
from anima.wire.topics import Topics

if TYPE_CHECKING:
    from anima.runtime import Runtime

log = logging.getLogger(__name__)

HEALTH_PERIOD_S = 1.0
MAX_PAYLOAD = 4096  # a ping or an identity is a few hundred bytes
PONGS_PER_S = 20.0
PAYLOAD_VERSION = 1


def identity(runtime: Runtime, config: MqttConfig, instance: str) -> JsonObject:
    up = time.monotonic() - runtime.health.started  # not a whole health read for one number
    started = datetime.datetime.now(datetime.UTC) - datetime.timedelta(seconds=up)
    return {
        "v": PAYLOAD_VERSION,
        "name": config.name or config.prefix,
        "prefix": config.prefix,
        "instance": instance,
        "version": __version__,
        "body": runtime.body.name,
        "driver": runtime.config.driver.type,
        "host": socket.gethostname(),
        "pid": os.getpid(),
        "started": started.isoformat(timespec="seconds"),
    }


class Presence:
    """The door's part: identity, health and pongs (called from paho's thread and the watch)."""

    def __init__(
        self,
        runtime: Runtime,
        config: MqttConfig,
        topics: Topics,
        publish: Callable[..., None],
    ) -> None:
        self.runtime = runtime
        self.config = config
        self.topics = topics
        self._publish = publish
        self.instance = secrets.token_hex(8)
        self._health_due = 0.0
        self._pong_at = -1e9
        self._others: set[str] = set()  # other instances seen on our prefix (each logged once)

    def subscriptions(self) -> list[tuple[str, int]]:
        return [(self.topics.ping, 1), (self.topics.identity, 1)]

    def announce(self) -> None:
        body = json.dumps(identity(self.runtime, self.config, self.instance))
        self._publish(self.topics.identity, body, qos=1, retain=True)
        self.publish_health(force=True)

    def publish_health(self, *, force: bool = False) -> None:
        now = time.monotonic()
        if not force and now < self._health_due:
            return
        self._health_due = now + HEALTH_PERIOD_S
        health = self.runtime.health.now().to_json()
        body = json.dumps({"v": PAYLOAD_VERSION, "t": round(self.runtime.engine.clock.now(), 3),
                           **health})  # fmt: skip
        self._publish(self.topics.health, body, retain=True)

    def handle(self, topic: str, payload: bytes) -> bool:
        """A ping answered, or another instance's identity noticed; False for other topics.
        Anyone may publish there: a payload past ``MAX_PAYLOAD`` is ignored, pongs are at most
        ``PONGS_PER_S`` (a ping flood is not amplified), and each other instance is logged once."""
        if topic not in (self.topics.ping, self.topics.identity):
            return False
        if len(payload) > MAX_PAYLOAD:
            return True
        if topic == self.topics.ping:
            nonce = _field(payload, "nonce")
            now = time.monotonic()
            if nonce is not None and len(nonce) <= 64 and now - self._pong_at >= 1 / PONGS_PER_S:
                self._pong_at = now
                pong = {"v": PAYLOAD_VERSION, "nonce": nonce, "instance": self.instance}
                self._publish(self.topics.pong, json.dumps(pong), qos=1)
            return True
        other = _field(payload, "instance")
        seen = self._others
        if other is not None and other != self.instance and other not in seen and len(seen) < 100:
            seen.add(other)
            log.error(
                "MQTT: another anima (%s) announced itself on prefix %r: two robots share "
                "every command there; give each its own mqtt.prefix",
                _who(payload),
                self.config.prefix,
            )
        return True


def check_claim(
    config: MqttConfig, address: BrokerAddress, instance: str, *, timeout: float = 1.5
) -> None:
    """Refuse (ConfigError) when another live anima holds ``config.prefix`` on this broker.

    A broker that does not answer within ``timeout`` is not checked (the door connects when it
    comes): the running door still notices a second identity on its prefix."""
    topics = Topics(config.prefix)
    seen: dict[str, bytes] = {}
    subscribed = threading.Event()
    caught_up = threading.Event()  # our own barrier came back: the retained ones came first
    pong = threading.Event()
    nonce, barrier = secrets.token_hex(6), secrets.token_hex(6)
    client = door_client(config, clean_session=True, suffix=f"-claim-{secrets.token_hex(3)}")

    def on_message(_c: Any, _u: Any, msg: Any) -> None:
        if msg.topic == topics.pong:
            said = _field(msg.payload, "nonce")
            if said == barrier:
                caught_up.set()
            elif said == nonce and _field(msg.payload, "instance") != instance:
                pong.set()
        else:
            seen[msg.topic] = bytes(msg.payload)

    client.on_message = on_message
    client.on_subscribe = lambda *_a: subscribed.set()
    client.on_connect = lambda c, *_a: c.subscribe(
        [(topics.status, 1), (topics.identity, 1), (topics.pong, 1)]
    )
    try:
        client.connect_timeout = timeout
        client.connect(address.host, address.port, keepalive=10)
    except (OSError, ValueError) as exc:
        log.info("MQTT: prefix %r not checked (%s): the broker does not answer", config.prefix, exc)
        return
    client.loop_start()
    try:
        if not subscribed.wait(timeout):
            log.info("MQTT: prefix %r not checked: no SUBACK in %g s", config.prefix, timeout)
            return
        # the retained messages follow the SUBACK, before what we publish next
        client.publish(topics.pong, json.dumps({"v": PAYLOAD_VERSION, "nonce": barrier}), qos=1)
        caught_up.wait(timeout)
        online = seen.get(topics.status) == b"online"
        other = _field(seen.get(topics.identity, b""), "instance")
        if not online or other in (None, instance):
            return
        client.publish(topics.ping, json.dumps({"v": PAYLOAD_VERSION, "nonce": nonce}), qos=1)
        if pong.wait(timeout):
            raise ConfigError(
                f"mqtt.prefix {config.prefix!r} is taken on {address}: another anima answers "
                f"there ({_who(seen.get(topics.identity, b''))}). Two robots on one prefix would "
                "share every command: give this one its own (mqtt.prefix, ANIMA_MQTT__PREFIX)",
                key="mqtt.prefix",
            )
        log.info(
            "MQTT: prefix %r said online (%s) but answered no ping: taking it over",
            config.prefix,
            _who(seen.get(topics.identity, b"")),
        )
    finally:
        client.disconnect()
        client.loop_stop()


def _field(payload: bytes, name: str) -> str | None:
    if len(payload) > MAX_PAYLOAD:
        return None
    try:
        data = json.loads(payload)
    except (ValueError, RecursionError):
        return None
    value = data.get(name) if isinstance(data, dict) else None
    return value if isinstance(value, str) else None


def _who(payload: bytes) -> str:
    """``host pid N, since …`` from an identity payload, or a placeholder."""
    try:
        data = json.loads(payload)
        return f"{data['name']} on {data['host']}, pid {data['pid']}, since {data['started']}"
    except (ValueError, KeyError, TypeError):
        return "identity unknown"
