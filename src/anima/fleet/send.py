"""Commands to robots on a broker: published QoS 1, held until each robot is online, and their
refusals heard (``anima fleet send``; docs/fleet.md).

MQTT is fire-and-forget: the broker acknowledges a command, not the robot. A robot that refuses
one (an unknown animation, speech not available, during an estop…) says so on its documented
error topic, ``<prefix>/agent/feedback/error``, as ``{"topic", "payload", "reason"}`` with the
payload's excerpt (:func:`anima.wire.payloads.excerpt`). :func:`deliver` subscribes to that
topic before publishing and waits up to ``refusal_s`` for a refusal matching its command, so a
caller learns of it instead of printing "sent".

A robot whose status is not ``online`` (its link cut, its broker restarting, a broker that keeps
no session and would drop the command) is waited for up to ``online_s`` before anything is
published to it; one that does not come back in time is reported, never silently skipped.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from anima.fleet.client import FleetError, connect
from anima.wire.mqtt import BrokerAddress, Credentials
from anima.wire.payloads import excerpt

MAX_ROBOTS = 1000  # one subscription pair each: a bound on what one send subscribes to


@dataclass(frozen=True)
class Delivery:
    """What became of a command sent to one robot."""

    prefix: str
    topic: str
    refused: str | None = None  # the robot's reason, or why it was not sent
    sent: bool = True  # False: the robot never came online within online_s, nothing published


def send(
    address: BrokerAddress,
    prefixes: Iterable[str],
    command: str,
    payload: str,
    credentials: Credentials | None = None,
    *,
    timeout: float = 3.0,
) -> list[str]:
    """Publish ``payload`` to ``<prefix>/agent/control/<command>`` of each, QoS 1; the topics,
    once the broker has acknowledged each (no wait for the robots: :func:`deliver` waits)."""
    done = deliver(address, prefixes, command, payload, credentials, timeout=timeout,
                   online_s=0.0, refusal_s=0.0)  # fmt: skip
    return [d.topic for d in done]


def deliver(
    address: BrokerAddress,
    prefixes: Iterable[str],
    command: str,
    payload: str,
    credentials: Credentials | None = None,
    *,
    timeout: float = 3.0,
    online_s: float = 10.0,
    refusal_s: float = 1.0,
) -> list[Delivery]:
    """Send to each robot once it says ``online`` (waiting up to ``online_s``; 0: at once),
    then wait up to ``refusal_s`` for refusals on their error topics. FleetError when the
    broker does not acknowledge a publish within ``timeout``."""
    chosen = list(dict.fromkeys(prefixes))[:MAX_ROBOTS]
    topics = {p: f"{p}/agent/control/{command}" for p in chosen}
    said = excerpt(payload)
    lock = threading.Condition()
    status: dict[str, str] = {}
    refused: dict[str, str] = {}
    listen = online_s > 0 or refusal_s > 0

    def on_message(_c: Any, _u: Any, msg: Any) -> None:
        prefix, _, leaf = str(msg.topic).rpartition("/agent/")
        with lock:
            if leaf == "status":
                status[prefix] = bytes(msg.payload[:16]).decode("utf-8", "replace").strip()
            elif leaf == "feedback/error" and prefix in topics:
                reason = _refusal(bytes(msg.payload), topics[prefix], said)
                if reason is not None:
                    refused.setdefault(prefix, reason)
            lock.notify_all()

    client = connect(credentials or Credentials(), address, timeout)
    try:
        if listen:
            subscribed = threading.Event()
            client.on_message = on_message
            client.on_subscribe = lambda *_a: subscribed.set()
            filters = [(f"{p}/agent/{leaf}", 1) for p in chosen for leaf in ("status",
                       "feedback/error")]  # fmt: skip
            if filters:
                client.subscribe(filters)
                if not subscribed.wait(timeout):
                    raise FleetError(f"the broker at {address} did not acknowledge a subscription")
        ready = chosen
        if online_s > 0:
            with lock:
                lock.wait_for(lambda: all(status.get(p) == "online" for p in chosen), online_s)
                ready = [p for p in chosen if status.get(p) == "online"]
        infos = [(p, client.publish(topics[p], payload, qos=1)) for p in ready]
        deadline = time.monotonic() + timeout
        for prefix, info in infos:
            info.wait_for_publish(max(0.0, deadline - time.monotonic()))
            if not info.is_published():
                raise FleetError(f"{topics[prefix]}: the broker at {address} did not "
                                 f"acknowledge it within {timeout:g} s")  # fmt: skip
        if refusal_s > 0 and ready:
            with lock:
                lock.wait_for(lambda: all(p in refused for p in ready), refusal_s)
        with lock:
            return [
                Delivery(p, topics[p], refused.get(p))
                if p in ready
                else Delivery(p, topics[p], _offline(status.get(p), online_s), sent=False)
                for p in chosen
            ]
    finally:
        client.disconnect()
        client.loop_stop()


def _refusal(raw: bytes, topic: str, said: str) -> str | None:
    """The reason in an error-topic message when it refuses ``topic`` with payload ``said``."""
    try:
        data = json.loads(raw)
    except (ValueError, RecursionError):
        return None
    if not isinstance(data, dict) or data.get("topic") != topic or data.get("payload") != said:
        return None
    reason = data.get("reason")
    return reason if isinstance(reason, str) else "refused (no reason given)"


def _offline(status: str | None, online_s: float) -> str:
    shown = status or "no status"
    return f"the robot did not say online within {online_s:g} s (its status: {shown})"
