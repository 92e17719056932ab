"""The Nadine MQTT contract on a real broker (paho-mqtt 2, callback API version 2).

Subscribes ``<prefix>/agent/control/#``; each message is parsed and validated on paho's thread
(quick, no I/O; ``control.py``) and handed to the command dispatcher, so the callback returns
at once. Refusals go to ``<prefix>/agent/feedback/error``. Runtime events become feedback
topics; a retained state message is published a few times a second; ``<prefix>/agent/status``
is a retained ``online`` with a last will of ``offline``.

Never deaf while saying ``online``: every paho callback runs inside a boundary that keeps its
exceptions (``guard.py``), and a watchdog on the door's own thread notices if paho's network
thread ends anyway, marks the door disconnected and restarts the loop. The session is
persistent (``session.py``): QoS 1 commands sent while the link is down are delivered after it
comes back, or refused as stale after a long outage (estop never is). An estop also comes
through a second connection that hears nothing else (``estop_lane.py``), so it never waits
behind a flood.

Beyond Nadine's contract, when a humanoid is linked: ``<prefix>/agent/control/humanoid/<command>``
(mode, motion, posture, speed; :mod:`anima.wire.humanoid`) runs on a worker thread of this
door (a gRPC round trip, ``humanoid_worker.py``), answering on
``<prefix>/agent/feedback/humanoid`` or the error topic, and its whole state is retained on
``<prefix>/agent/humanoid/state``.
"""

from __future__ import annotations

import dataclasses
import logging
import secrets
import threading
import time
from typing import TYPE_CHECKING, Any

from anima.config import MqttConfig
from anima.errors import AnimaError
from anima.frontdoors.dispatch import CommandDispatcher, Origin
from anima.frontdoors.mqtt import link as mqtt_link
from anima.frontdoors.mqtt.acks import AckWindow
from anima.frontdoors.mqtt.conflict import PrefixConflict
from anima.frontdoors.mqtt.control import ControlRoute
from anima.frontdoors.mqtt.estop_lane import EstopLane
from anima.frontdoors.mqtt.feedback import Feedback
from anima.frontdoors.mqtt.guard import CallbackBoundary, describe
from anima.frontdoors.mqtt.humanoid_worker import HumanoidWorker
from anima.frontdoors.mqtt.presence import Presence, check_claim
from anima.frontdoors.mqtt.session import Backlog
from anima.wire import encode as as_json
from anima.wire.mqtt import BrokerAddress, client_id, connack_reason, door_client
from anima.wire.payloads import Parser, control_parsers, excerpt, parse_estop
from anima.wire.printable import printable
from anima.wire.topics import Topics

if TYPE_CHECKING:
    from anima.runtime import Runtime

log = logging.getLogger(__name__)

WATCH_S = 0.1  # how often the watchdog looks at paho's network thread


class MqttFrontDoor:
    """Bridges one robot's MQTT topics to its runtime. ``start()``/``stop()`` own everything."""

    def __init__(
        self,
        runtime: Runtime,
        config: MqttConfig,
        address: BrokerAddress,
        *,
        parsers: dict[str, Parser] | None = None,
    ) -> None:
        """``parsers`` replaces the control topics' parsers (by leaf): extensions and tests."""
        self.runtime = runtime
        self.config = config
        self.address = address
        self.topics = Topics(config.prefix)
        self.client_id = client_id(config)
        self.dispatcher = CommandDispatcher(runtime.execute, runtime.events)
        self._client: Any = None
        self._connected = threading.Event()
        self._stop = threading.Event()
        self._state_thread: threading.Thread | None = None
        self._unsubscribe: list[Any] = []
        self.received = 0
        self.rejected = 0
        self.connects = 0
        self.restarts = 0  # times the watchdog restarted a dead network thread
        self.last_outage_s = 0.0  # the outage the last connection ended (inf: unknown)
        self._subscription = -1  # message id of the pending SUBSCRIBE
        self._feedback = Feedback(self.topics, self._publish, runtime.library, self._count_rejected)
        self._boundary = CallbackBoundary(self._on_crash)
        self._backlog = Backlog(config.stale_after_s)
        self._net_thread: threading.Thread | None = None  # paho's, seen from its callbacks
        self._short_links = mqtt_link.ShortLinks(config, self.client_id)
        self._humanoid = HumanoidWorker(runtime, self._humanoid_answer, self._error)
        self._route = ControlRoute(  # control.py
            self.topics.control,
            control_parsers(runtime.library) if parsers is None else dict(parsers),
            dispatcher=self.dispatcher,
            backlog=self._backlog,
            humanoid=self._humanoid,
            refuse=self._error,
        )
        self.acks = AckWindow()  # QoS 1 publishes awaiting their PUBACK (acks.py)
        self.presence = Presence(  # presence.py
            runtime, config, self.topics, self._publish, on_live_other=self._conflict_found
        )
        # another anima on the prefix: a warning, or this door stands down (conflict.py)
        self.conflict = PrefixConflict(config, address, runtime.health.problems)
        estop_topic = self.topics.control + "estop"
        self.estop_lane = (
            EstopLane(config, address, estop_topic, self._lane_estop) if config.estop_lane else None
        )

    # ------------------------------------------------------------------ lifecycle
    def prepare(self) -> None:
        """Nothing to load: paho came with this module; the client is made at start."""

    def start(self) -> None:
        cfg = self.config
        check_claim(cfg, self.address, self.presence.instance)  # one prefix, one robot
        client = door_client(cfg, clean_session=not cfg.persistent_session)
        client.will_set(self.topics.status, "offline", qos=1, retain=True)
        client.reconnect_delay_set(0.25, 2)  # seconds (floats work)
        guard = self._boundary.guard
        client.on_connect = guard("on_connect", self._on_connect)
        client.on_subscribe = guard("on_subscribe", self._on_subscribe)
        client.on_disconnect = guard("on_disconnect", self._on_disconnect)
        client.on_message = guard("on_message", self._on_message, self._message_failed)
        client.on_publish = guard("on_publish", lambda _c, _u, mid, *_: self.acks.acknowledged(mid))
        self._client = client
        self._unsubscribe = self._feedback.subscribe(self.runtime.events)
        self.dispatcher.start()
        self._humanoid.start()
        client.connect_async(self.address.host, self.address.port, keepalive=cfg.keepalive_s)
        client.loop_start()
        if self.estop_lane is not None:
            self.estop_lane.start()
        self._stop.clear()
        self._state_thread = threading.Thread(target=self._watch, name="anima-mqtt-watch")
        self._state_thread.start()

    def wait_connected(self, timeout: float) -> bool:
        return self._connected.wait(timeout)

    @property
    def stood_down(self) -> str:
        """Why this door stopped serving MQTT (another anima takes its session); "" serving."""
        return self.conflict.stood_down

    @property
    def connected(self) -> bool:
        """Connected, subscribed, and paho's network thread alive: commands are heard."""
        thread = self._net_thread
        return self._connected.is_set() and (thread is None or thread.is_alive())

    def stop(self, timeout: float = 5.0) -> None:
        self._stop.set()
        if self._state_thread is not None:
            self._state_thread.join(min(2.0, timeout))
            self._state_thread = None
        for unsubscribe in self._unsubscribe:
            unsubscribe()
        self._unsubscribe = []
        # the lane's paho loop may sleep in its reconnect wait (up to 1 s with the broker
        # gone): ended beside the door's own, not before it
        lane = self.estop_lane
        lane_stop = (
            threading.Thread(target=lane.stop, name="anima-mqtt-lane-stop") if lane else None
        )
        if lane_stop is not None:
            lane_stop.start()
        self.dispatcher.stop()
        self._humanoid.stop()
        client = self._client
        if client is not None:
            heard = self._connected.is_set()
            self._connected.clear()  # a disconnect we asked for, not one to warn about
            if heard:  # nothing left that looks alive (the next start must not mistake it)
                self.presence.retire()
                info = client.publish(self.topics.status, "offline", qos=1, retain=True)
                info.wait_for_publish(1.0)
            client.disconnect()
            client.loop_stop()
            self._client = None
            if self.config.persistent_session and heard:  # unreachable: stop at once
                mqtt_link.end_session(self.config, self.address)
        if lane_stop is not None:
            lane_stop.join(min(2.0, timeout))

    # ------------------------------------------------------------------ paho callbacks
    def _on_connect(
        self, client: Any, _userdata: Any, flags: Any, reason: Any, _props: Any
    ) -> None:
        self._net_thread = threading.current_thread()  # paho's: the watchdog follows it
        if reason.is_failure:
            log.warning("MQTT connection to %s refused: %s", self.address, connack_reason(reason))
            return
        self.connects += 1
        self._short_links.connected()
        present = bool(getattr(flags, "session_present", False))
        if not present:
            self.acks.clear()
        marker = f"{self.connects}-{secrets.token_hex(4)}"
        outage = self._backlog.connected(present and self.config.persistent_session, marker)
        self.last_outage_s = outage
        if self.connects > 1:
            kept = "kept the session: queued commands follow" if present else "kept no session"
            log.info("MQTT reconnected after %.2f s; the broker %s", outage, kept)
        session_topic = self.topics.session(self.client_id)
        # our own status too: a will the broker publishes late must not leave "offline" on a
        # door that hears (see _on_message)
        _rc, self._subscription = client.subscribe(
            [
                (self.topics.control_filter, 1),
                (session_topic, 1),
                (self.topics.status, 1),
                *self.presence.subscriptions(),
            ]
        )
        if present:  # queued behind the backlog: when it arrives, the backlog is over
            client.publish(session_topic, marker, qos=1)

    def _on_subscribe(
        self, client: Any, _userdata: Any, mid: int, reasons: Any, _props: Any
    ) -> None:
        # "online" (and wait_connected) only once the broker acknowledged the subscription:
        # a command sent the moment a client sees "online" must not be lost (amqtt handles a
        # SUBSCRIBE and the next PUBLISH concurrently)
        if mid != self._subscription:
            return
        if any(r.is_failure for r in reasons):
            log.warning(
                "MQTT broker %s refused %s: %s", self.address, self.topics.control_filter, reasons
            )
            return
        client.publish(self.topics.status, "online", qos=1, retain=True)
        self.presence.announce()
        self._connected.set()
        log.info("MQTT connected to %s, serving %s", self.address, self.topics.control_filter)

    def _on_disconnect(
        self, _client: Any, _userdata: Any, _flags: Any, reason: Any, _props: Any
    ) -> None:
        self._backlog.disconnected()
        if self._connected.is_set():
            log.warning("MQTT disconnected from %s (%s): reconnecting", self.address, reason)
            if self._short_links.cut():
                self.presence.links_cut_short()  # another instance's identity: stand down
        self._connected.clear()

    def _on_message(self, _client: Any, _userdata: Any, msg: Any) -> None:
        topic: str = msg.topic
        payload: bytes = msg.payload
        if not topic.startswith(self.topics.control):
            self._on_own_topic(topic, payload, bool(msg.retain))
            return
        self.received += 1
        self._route.route(topic, payload)

    def _lane_estop(self, payload: bytes) -> None:
        """An estop from the estop lane (``estop_lane.py``): at once, ahead of any backlog."""
        try:
            command = parse_estop(payload)
        except AnimaError:  # too big: the door's own copy is refused on the error topic
            return
        origin = Origin("mqtt", self.topics.control + "estop", excerpt(payload))
        self.dispatcher.submit(command, origin)

    def _on_own_topic(self, topic: str, payload: bytes, retained: bool) -> None:
        """The session marker, our status topic, or presence's; nothing else is ours."""
        if self.presence.handle(topic, payload, retained=retained):
            return
        if topic == self.topics.session(self.client_id):
            if self._backlog.marker_arrived(payload.decode("utf-8", "replace")):
                log.debug("MQTT: the broker's backlog is delivered")
        elif (
            topic == self.topics.status
            and payload == b"offline"
            and self.connected
            and not self._stop.is_set()
        ):
            # the will of a connection the watchdog replaced (or of a crashed run) came after
            # our "online": we do hear, so say so again
            self._publish(self.topics.status, "online", qos=1, retain=True)

    def _message_failed(self, exc: Exception, args: tuple[Any, ...]) -> None:
        """The boundary caught ``exc`` from ``_on_message``: answer that message."""
        msg = args[2]
        reason = f"internal error: {type(exc).__name__}: {describe(exc)}"
        self._error(str(msg.topic), bytes(msg.payload), reason)

    def _on_crash(self, name: str, _exc: BaseException, args: tuple[Any, ...]) -> None:
        """A BaseException ends paho's thread: deaf from now until the watchdog restarts it."""
        self._connected.clear()
        if name == "on_message":  # QoS 1: unacknowledged, the broker will deliver it again
            msg = args[2]
            self._route.poison = (str(msg.topic), bytes(msg.payload))

    def _conflict_found(self, payload: bytes, *, newer: bool, taking_session: bool) -> None:
        self.conflict.found(payload, newer=newer, taking_session=taking_session)

    def _stand_down(self) -> None:
        client, self._client = self._client, None
        self._connected.clear()  # a disconnect we asked for: no warning, no will
        self._net_thread = None
        if client is not None:
            client.disconnect()
            client.loop_stop()
        if self.estop_lane is not None:
            self.estop_lane.stop()
        log.error("MQTT: %s", self.conflict.stood())

    def _humanoid_answer(self, command: str, request: str, answer: str) -> None:
        body = as_json(command=command, request=request, answer=answer)
        self._publish(self.topics.feedback("humanoid"), body, qos=1)

    # ------------------------------------------------------------------ publishing
    def _publish(self, topic: str, payload: str, *, qos: int = 0, retain: bool = False) -> None:
        client = self._client
        if client is None:
            return
        qos = self.acks.qos_for(qos)  # QoS 0 while too many await their PUBACK (acks.py)
        info = client.publish(topic, payload, qos=qos, retain=retain)
        if qos:
            self.acks.sent(info.mid)

    def _count_rejected(self) -> None:
        self.rejected += 1

    def _error(self, topic: str, payload: bytes | str, reason: str) -> None:
        self.rejected += 1
        if self.rejected <= 20 or self.rejected % 1000 == 0:
            log.warning("rejected %s: %s", printable(topic), printable(reason, 300))  # anyone's
        self._publish(
            self.topics.feedback("error"),
            as_json(topic=topic, payload=excerpt(payload), reason=reason),
            qos=1,
        )

    def state_payload(self) -> str:
        return as_json(**self.runtime.state().to_json())

    def _watch(self) -> None:
        """The door's own thread: restarts a dead network thread; publishes the state."""
        period = 1.0 / self.config.state_hz
        due = time.monotonic() + period
        while not self._stop.wait(min(WATCH_S, period)):
            if self.conflict.due:
                self._stand_down()
            self.conflict.tick()
            self._check_network()
            if time.monotonic() < due:
                continue
            due += period
            if self.connected:
                self._publish_state()

    def _check_network(self) -> None:
        thread, client = self._net_thread, self._client
        if thread is None or thread.is_alive() or client is None or self._stop.is_set():
            return
        self._net_thread = None
        self._connected.clear()
        self.restarts += 1
        log.error(
            "MQTT: paho's network thread ended: deaf to %s; restarting it (restart %d)",
            self.topics.control_filter,
            self.restarts,
        )
        try:
            mqtt_link.restart_loop(client, self.address, self.config.keepalive_s)
        except Exception:  # the next watch retries
            log.exception("MQTT: restarting the network thread failed")

    def _publish_state(self) -> None:
        try:
            self._publish(self.topics.state, self.state_payload(), retain=True)
            self.presence.publish_health()
            link = self.runtime.humanoid
            if link is not None and link.state is not None:
                body = as_json(**dataclasses.asdict(link.state), error=link.error)
                self._publish(self.topics.humanoid_state, body, retain=True)
        except Exception:  # the state is best effort; the next one will do
            log.exception("state publish failed")
