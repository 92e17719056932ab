"""Many robots on one broker, seen from anywhere (``anima fleet``; docs/fleet.md).

Every anima retains, under its own prefix, its status (``online``, or ``offline`` by its last
will), its identity, its state and its health. :func:`survey` subscribes to those four for every
prefix (one or two topic levels: ``museum/hall1/agent/…`` too), reads the retained messages and
returns a :class:`Robot` per prefix, in well under 2 s. :func:`send` publishes a command (a leaf
of Nadine's contract: ``animation``, ``speak``, ``estop``, …) to some or all of them, QoS 1;
:func:`deliver` also holds it until each robot is online and reports refusals (``send.py``).
A client of the wire only (``anima.wire``): it needs no runtime.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from anima.fleet.client import FleetError, connect
from anima.fleet.send import Delivery, deliver, send
from anima.wire.jsontypes import JsonObject
from anima.wire.mqtt import BrokerAddress, Credentials
from anima.wire.printable import printable

__all__ = ["Delivery", "FleetError", "FleetWatcher", "Robot", "deliver", "send", "survey"]

log = logging.getLogger(__name__)
LEAVES = ("status", "identity", "state", "health")
MAX_PAYLOAD = 256 * 1024  # a state or a health is a few kB
FILTERS = [f"+/agent/{leaf}" for leaf in LEAVES] + [f"+/+/agent/{leaf}" for leaf in LEAVES]


@dataclass
class Robot:
    prefix: str
    status: str = "unknown"  # online, offline (its last will, or a clean stop), unknown
    identity: JsonObject = field(default_factory=dict)
    state: JsonObject = field(default_factory=dict)
    health: JsonObject = field(default_factory=dict)

    @property
    def name(self) -> str:
        name = self.identity.get("name")
        return name if isinstance(name, str) else self.prefix

    @property
    def online(self) -> bool:
        return self.status == "online"

    def row(self) -> dict[str, str]:
        """The columns ``anima fleet`` prints."""
        loop = self.state.get("loop")
        rate = loop.get("rate_hz") if isinstance(loop, dict) else None
        warnings = self.health.get("warnings")
        if not self.health:
            health = "–"
        elif isinstance(warnings, list) and warnings:
            first = str(warnings[0])[:120]
            health = f"{len(warnings)} warning{'s' * (len(warnings) > 1)}: {first}"
        elif self.health.get("ok") is True:
            health = "ok"
        else:
            health = "unknown"  # a health that says neither
        live = {"loop", "speaking", "estop", "health"}  # what an offline robot's retained say
        row = {
            "name": self.name,
            "prefix": self.prefix,
            "status": self.status,
            "loop": f"{rate:.1f} Hz" if isinstance(rate, int | float) else "–",
            "speaking": _yes(self.state.get("speaking")),
            "estop": _yes(self.state.get("estop")),
            "body": str(self.identity.get("body", "–")),
            "driver": str(self.identity.get("driver", "–")),
            "host": str(self.identity.get("host", "–")),
            "health": health,
        }
        # anyone may retain these: no newline or escape sequence reaches the terminal
        return {k: ("–" if k in live and not self.online else printable(v, 120))
                for k, v in row.items()}  # fmt: skip

    def to_json(self) -> JsonObject:
        return {"name": self.name, "prefix": self.prefix, "status": self.status,
                "identity": self.identity, "state": self.state, "health": self.health}  # fmt: skip


def _yes(value: object) -> str:
    return "–" if value is None else ("yes" if value else "no")


class FleetWatcher:
    """A live view of the fleet: one client subscribed to every robot's retained topics, its
    :class:`Robot` per prefix updated as their messages come (``anima fleet serve``)."""

    def __init__(
        self,
        address: BrokerAddress,
        credentials: Credentials | None = None,
        *,
        timeout: float = 3.0,
    ) -> None:
        self.address = address
        self.credentials = credentials or Credentials()
        self.timeout = timeout
        self._robots: dict[str, Robot] = {}
        self._lock = threading.Lock()
        self._changed = threading.Condition(self._lock)  # notified at each message taken
        self._client: Any = None

    def start(self) -> FleetWatcher:
        subscribed = threading.Event()
        client = connect(self.credentials, self.address, self.timeout)
        client.on_message = self._on_message
        client.on_subscribe = lambda *_a: subscribed.set()
        # after a reconnect: subscribe again (the client's session is clean)
        client.on_connect = lambda c, *_a: c.subscribe([(f, 1) for f in FILTERS])
        client.subscribe([(f, 1) for f in FILTERS])
        self._client = client
        if not subscribed.wait(self.timeout):
            self.stop()
            raise FleetError(f"the broker at {self.address} did not acknowledge the subscription")
        return self

    def stop(self) -> None:
        client, self._client = self._client, None
        if client is not None:
            client.disconnect()
            client.loop_stop()

    def robots(self) -> list[Robot]:
        with self._lock:
            return sorted(
                (dataclasses.replace(r) for r in self._robots.values()),
                key=lambda r: (r.name, r.prefix),
            )

    def wait_until(self, done: Callable[[list[Robot]], bool], timeout: float) -> bool:
        """Until ``done(robots)`` (True; called with the live records, under the view's lock:
        read them, keep nothing), or ``timeout`` seconds (False)."""
        with self._changed:
            return self._changed.wait_for(lambda: done(list(self._robots.values())), timeout)

    def wait_complete(self, timeout: float) -> bool:
        """Until every robot seen online has its identity, state and health (True), or
        ``timeout`` seconds (False: some are still missing a part)."""
        return self.wait_until(
            lambda robots: all(r.identity and r.state and r.health for r in robots if r.online),
            timeout,
        )

    def _on_message(self, _c: Any, _u: Any, msg: Any) -> None:
        try:
            self._take(str(msg.topic), bytes(msg.payload))
        except Exception:  # anyone may publish there: one odd message must not end the view
            log.debug("fleet: a message on %s could not be read", msg.topic, exc_info=True)

    def _take(self, topic: str, payload: bytes) -> None:
        prefix, _, leaf = topic.rpartition("/agent/")
        if leaf not in LEAVES or len(payload) > MAX_PAYLOAD:
            return
        with self._changed:
            self._changed.notify_all()
            robot = self._robots.setdefault(prefix, Robot(prefix))
            if leaf == "status":
                robot.status = payload[:16].decode("utf-8", "replace").strip() or "unknown"
                return
            if not payload:  # a retained message cleared: forget that part
                setattr(robot, leaf, {})
                return
            try:
                data = json.loads(payload)
            except (ValueError, RecursionError):
                return
            if isinstance(data, dict):
                setattr(robot, leaf, data)


def survey(
    address: BrokerAddress,
    credentials: Credentials | None = None,
    *,
    wait_s: float = 1.0,
    timeout: float = 3.0,
    settle_s: float = 0.8,
) -> list[Robot]:
    """Every robot that retained anything on the broker, by prefix (sorted by name).

    It listens ``wait_s`` (the retained messages, and the live ones of that time), then up to
    ``settle_s`` more while a robot seen online still lacks its identity, state or health: a
    broker under load hands out a subscription's retained messages one filter after another,
    and a robot's health (the last filter) may come after the first second."""
    watcher = FleetWatcher(address, credentials, timeout=timeout).start()
    try:
        time.sleep(wait_s)
        watcher.wait_complete(settle_s)
        return watcher.robots()
    finally:
        watcher.stop()
