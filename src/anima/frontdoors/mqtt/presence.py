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

**Live or stale.** A clean stop republishes the retained identity with ``stopped`` (the time it
stopped), so the next start finds nothing that looks alive. A running door counts another
instance as live only on evidence: its identity arrives as a live publish (not a retained copy),
or its instance answers a ping within the probe window, or — two doors with the same client id
take the broker's session from each other, so they are never connected at the same time and
no ping is ever answered — the door's connections keep being cut within a second while a
retained identity of another instance sits on the prefix. A retained identity that answers no
ping (a crashed run) is stale: logged at DEBUG, nothing more. When a live one is found, the
newer instance (the later start; the instance id breaks a tie) stops serving MQTT (the door's
``stand_down``) and says why, in the log and in its health; the older logs it once.

Everything printed of another instance's payload goes through :func:`anima.wire.printable`:
anyone may publish there, and a newline or an escape sequence must not reach a log or a terminal.
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
from anima.wire.printable import printable
from anima.wire.topics import Topics

if TYPE_CHECKING:
    from anima.runtime import Runtime

log = logging.getLogger(__name__)

HEALTH_PERIOD_S = 1.0
MAX_PAYLOAD = 4096  # a ping or an identity is a few hundred bytes
PONGS_PER_S = 20.0
PAYLOAD_VERSION = 1
MAX_PROBES = 100  # pings of retained identities outstanding at once (each a few bytes)


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
        "started": started.isoformat(timespec="milliseconds"),  # the newer of two stands down
        "dashboard": dashboard_url(runtime),
    }


def dashboard_url(runtime: Runtime) -> str | None:
    """Where this robot's dashboard answers (for the fleet page's link), None when it serves
    none; a wildcard bind is named by this machine's host name."""
    from anima.frontdoors.web.server import WebFrontDoor  # asyncio and the web door's own

    web = runtime.config.web
    if not web.enabled:
        return None
    port = web.port
    for door in runtime.frontdoors:
        if isinstance(door, WebFrontDoor) and door.port:
            port = door.port  # the bound one (web.port may be 0)
    if not port:
        return None  # port 0 not bound yet
    host = web.host if web.host not in ("0.0.0.0", "::", "") else socket.gethostname()
    return f"http://{f'[{host}]' if ':' in host else host}:{port}/"


class Presence:
    """The door's part: identity, health and pongs (called from paho's thread and the watch).

    ``on_live_other(payload, newer=…, taking_session=…)`` is called when another instance is
    found live on the prefix: ``newer``, this one started after it; ``taking_session``, the two
    take the broker's session from each other (the connections cut short)."""

    def __init__(
        self,
        runtime: Runtime,
        config: MqttConfig,
        topics: Topics,
        publish: Callable[..., None],
        on_live_other: Callable[..., None] | None = None,
    ) -> None:
        self.runtime = runtime
        self.config = config
        self.topics = topics
        self._publish = publish
        self._on_live_other = on_live_other
        self.instance = secrets.token_hex(8)
        self._health_due = 0.0
        self._pong_at = -1e9
        self._others: set[str] = set()  # other instances found live (each reported once)
        self._probes: dict[str, bytes] = {}  # ping nonce → the retained identity it checks
        self._suspect: bytes | None = None  # the last retained identity of another instance
        self._started = ""  # our identity's start time, set by announce()
        self.pings_sent = 0  # to retained identities of other instances

    def subscriptions(self) -> list[tuple[str, int]]:
        return [(self.topics.ping, 1), (self.topics.identity, 1), (self.topics.pong, 1)]

    def announce(self) -> None:
        body = identity(self.runtime, self.config, self.instance)
        self._started = str(body["started"])
        self._publish(self.topics.identity, json.dumps(body), qos=1, retain=True)
        self.publish_health(force=True)

    def retire(self) -> None:
        """At a clean stop: the retained identity says this run stopped (nothing looks alive)."""
        stopped = datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")
        body = {**identity(self.runtime, self.config, self.instance), "stopped": stopped}
        self._publish(self.topics.identity, json.dumps(body), qos=1, retain=True)

    def publish_health(self, *, force: bool = False) -> None:
        now = time.monotonic()
        if not force and now < self._health_due:
            return
        self._health_due = now + HEALTH_PERIOD_S
        health = self.runtime.health.now().to_json()
        body = json.dumps({"v": PAYLOAD_VERSION, "t": round(self.runtime.engine.clock.now(), 3),
                           **health})  # fmt: skip
        self._publish(self.topics.health, body, retain=True)

    def handle(self, topic: str, payload: bytes, *, retained: bool = False) -> bool:
        """A ping answered, a pong or another instance's identity weighed; False for other
        topics. Anyone may publish there: a payload past ``MAX_PAYLOAD`` is ignored, pongs are
        at most ``PONGS_PER_S`` (a ping flood is not amplified), each other instance found live
        is reported once, and a retained identity is live only if its instance answers a ping."""
        if topic not in (self.topics.ping, self.topics.pong, self.topics.identity):
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
        if topic == self.topics.pong:
            nonce = _field(payload, "nonce") or ""
            pinged = self._probes.get(nonce)
            if pinged is not None and _field(pinged, "instance") == _field(payload, "instance"):
                del self._probes[nonce]
                self._live(pinged)  # the instance of that retained identity answers
            return True
        other = _field(payload, "instance")
        if other is None or other == self.instance:
            return True
        if _field(payload, "stopped") is not None:  # a clean stop's retained identity
            if self._suspect is not None and _field(self._suspect, "instance") == other:
                self._suspect = None
            log.debug("MQTT: prefix %r: %s stopped", self.config.prefix, who(payload))
            return True
        self._suspect = payload  # the other one we last heard of (for links_cut_short)
        if other in self._others:
            return True
        if not retained:  # published just now: it is connected
            self._live(payload)
            return True
        if len(self._probes) < MAX_PROBES:
            nonce = secrets.token_hex(6)
            self._probes[nonce] = payload
            self.pings_sent += 1
            ping = {"v": PAYLOAD_VERSION, "nonce": nonce}
            self._publish(self.topics.ping, json.dumps(ping), qos=1)
        log.debug("MQTT: prefix %r: a retained identity (%s), pinged", self.config.prefix,
                  who(payload))  # fmt: skip
        return True

    def links_cut_short(self) -> None:
        """The broker keeps cutting our connections: with another instance's identity retained
        on the prefix, that instance holds our client id (it takes the session from us)."""
        if self._suspect is not None:
            self._live(self._suspect, taking_session=True)

    def _live(self, payload: bytes, *, taking_session: bool = False) -> None:
        other = _field(payload, "instance") or ""
        theirs = (_field(payload, "started") or "", other)
        newer = (self._started, self.instance) > theirs
        if other not in self._others and len(self._others) < MAX_PROBES:
            self._others.add(other)
            log.error(
                "MQTT: another anima (%s) serves prefix %r too: two robots share every command "
                "there; give each its own mqtt.prefix",
                who(payload),
                self.config.prefix,
            )
        if self._on_live_other is not None:
            self._on_live_other(payload, newer=newer, taking_session=taking_session)


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
                f"there ({who(seen.get(topics.identity, b''))}). Two robots on one prefix would "
                "share every command: give this one its own (mqtt.prefix, ANIMA_MQTT__PREFIX)",
                key="mqtt.prefix",
            )
        log.info(
            "MQTT: prefix %r said online (%s) but answered no ping: taking it over",
            config.prefix,
            who(seen.get(topics.identity, b"")),
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


def who(payload: bytes) -> str:
    """``name on host, pid N, since …`` from an identity payload (printable: anyone may publish
    one), or a placeholder."""
    try:
        data = json.loads(payload)
        fields = [printable(data[k], 60) for k in ("name", "host", "pid", "started")]
    except (ValueError, KeyError, TypeError, RecursionError):
        return "identity unknown"
    return "{} on {}, pid {}, since {}".format(*fields)
