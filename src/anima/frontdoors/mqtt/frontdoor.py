"""The Nadine MQTT contract on a real broker (paho-mqtt 2, callback API version 2).

Subscribes ``<prefix>/agent/control/#``; each message is parsed and validated on paho's thread
(quick, no I/O) and handed to the command dispatcher, so the callback returns at once. Refusals
go to ``<prefix>/agent/feedback/error``. Runtime events become feedback topics; a retained state
message is published a few times a second; ``<prefix>/agent/status`` is a retained ``online``
with a last will of ``offline``.

Beyond Nadine's contract, when a humanoid is linked: ``<prefix>/agent/control/humanoid/<command>``
(mode, motion, posture, speed; :mod:`anima.frontdoors.humanoid`) runs on a worker thread of this
door (a gRPC round trip), answering on ``<prefix>/agent/feedback/humanoid`` or the error topic,
and its whole state is retained on ``<prefix>/agent/humanoid/state``.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import os
import ssl
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

from anima.config import MqttConfig
from anima.errors import AnimaError, MissingDependencyError
from anima.events import (
    ActionStatus,
    CommandRejected,
    Event,
    ListenTimeout,
    MoveFinished,
    Notice,
    PlanFinished,
    PlanStarted,
    SpeechEnded,
    SpeechStarted,
    Transcript,
    WakeDetected,
)
from anima.frontdoors.dispatch import CommandDispatcher, Origin
from anima.frontdoors.humanoid import COMMANDS as HUMANOID_COMMANDS
from anima.frontdoors.humanoid import NO_HUMANOID, HumanoidRequest, parse_humanoid
from anima.frontdoors.mqtt.broker import BrokerAddress
from anima.frontdoors.mqtt.topics import PAYLOAD_VERSION, Topics
from anima.frontdoors.payloads import Parser, control_parsers, excerpt
from anima.frontdoors.state import runtime_state

if TYPE_CHECKING:
    from anima.runtime import Runtime

log = logging.getLogger(__name__)

HUMANOID_LEAF = "humanoid/"  # control/humanoid/<command>
MAX_HUMANOID_PENDING = 32  # humanoid commands waiting for the robot; more are refused


def _json(**fields: Any) -> str:
    return json.dumps({"v": PAYLOAD_VERSION, **fields}, separators=(",", ":"))


class MqttFrontDoor:
    """Bridges one robot's MQTT topics to its runtime. ``start()``/``stop()`` own everything."""

    def __init__(self, runtime: Runtime, config: MqttConfig, address: BrokerAddress) -> None:
        self.runtime = runtime
        self.config = config
        self.address = address
        self.topics = Topics(config.prefix)
        self.dispatcher = CommandDispatcher(runtime.execute, runtime.events)
        self._parsers: dict[str, Parser] = control_parsers(runtime.library)
        self._client: Any = None
        self._connected = threading.Event()
        self._stop = threading.Event()
        self._state_thread: threading.Thread | None = None
        self._unsubscribe: list[Any] = []
        self.received = 0
        self.rejected = 0
        self.connects = 0
        self._subscription = -1  # message id of the pending SUBSCRIBE
        self._humanoid_worker: ThreadPoolExecutor | None = None
        self._humanoid_lock = threading.Lock()
        self._humanoid_pending = 0

    # ------------------------------------------------------------------ lifecycle
    def start(self) -> None:
        try:
            import paho.mqtt.client as mqtt
            from paho.mqtt.enums import CallbackAPIVersion
        except ImportError as exc:
            raise MissingDependencyError("paho-mqtt", "mqtt") from exc
        cfg = self.config
        client_id = cfg.client_id or f"anima-{cfg.prefix}-{os.getpid()}"
        client = mqtt.Client(CallbackAPIVersion.VERSION2, client_id=client_id)
        if cfg.username is not None:
            client.username_pw_set(cfg.username, cfg.password)
        if cfg.tls_ca is not None:
            client.tls_set(
                ca_certs=cfg.tls_ca,
                certfile=cfg.tls_cert,
                keyfile=cfg.tls_key,
                cert_reqs=ssl.CERT_REQUIRED,
            )
        client.will_set(self.topics.status, "offline", qos=1, retain=True)
        client.reconnect_delay_set(0.25, 2)  # type: ignore[arg-type]  # typed int; floats work
        client.on_connect = self._on_connect
        client.on_subscribe = self._on_subscribe
        client.on_disconnect = self._on_disconnect
        client.on_message = self._on_message
        self._client = client
        events = self.runtime.events
        self._unsubscribe = [
            events.subscribe(self._on_event, SpeechStarted.kind, SpeechEnded.kind),
            events.subscribe(self._on_event, CommandRejected.kind, Notice.kind),
            events.subscribe(self._on_event, MoveFinished.kind),
            events.subscribe(self._on_agent_event, Transcript.kind, WakeDetected.kind),
            events.subscribe(self._on_agent_event, PlanStarted.kind, PlanFinished.kind),
            events.subscribe(self._on_agent_event, ActionStatus.kind, ListenTimeout.kind),
        ]
        self.dispatcher.start()
        self._humanoid_worker = ThreadPoolExecutor(1, thread_name_prefix="anima-mqtt-humanoid")
        client.connect_async(self.address.host, self.address.port, keepalive=cfg.keepalive_s)
        client.loop_start()
        self._stop.clear()
        self._state_thread = threading.Thread(target=self._publish_state, name="anima-mqtt-state")
        self._state_thread.start()

    def wait_connected(self, timeout: float) -> bool:
        return self._connected.wait(timeout)

    @property
    def connected(self) -> bool:
        return self._connected.is_set()

    def stop(self) -> None:
        self._stop.set()
        if self._state_thread is not None:
            self._state_thread.join(2.0)
            self._state_thread = None
        for unsubscribe in self._unsubscribe:
            unsubscribe()
        self._unsubscribe = []
        self.dispatcher.stop()
        if self._humanoid_worker is not None:
            self._humanoid_worker.shutdown(wait=True, cancel_futures=True)
            self._humanoid_worker = None
        client = self._client
        if client is not None:
            if self._connected.is_set():
                info = client.publish(self.topics.status, "offline", qos=1, retain=True)
                info.wait_for_publish(1.0)
            self._connected.clear()  # a disconnect we asked for, not one to warn about
            client.disconnect()
            client.loop_stop()
            self._client = None

    # ------------------------------------------------------------------ paho callbacks
    def _on_connect(
        self, client: Any, _userdata: Any, _flags: Any, reason: Any, _props: Any
    ) -> None:
        if reason.is_failure:
            log.warning("MQTT connection to %s refused: %s", self.address, reason)
            return
        self.connects += 1
        _rc, self._subscription = client.subscribe(self.topics.control_filter, qos=1)

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
        self._connected.set()
        log.info("MQTT connected to %s, serving %s", self.address, self.topics.control_filter)

    def _on_disconnect(
        self, _client: Any, _userdata: Any, _flags: Any, reason: Any, _props: Any
    ) -> None:
        if self._connected.is_set():
            log.warning("MQTT disconnected from %s (%s): reconnecting", self.address, reason)
        self._connected.clear()

    def _on_message(self, _client: Any, _userdata: Any, msg: Any) -> None:
        topic: str = msg.topic
        payload: bytes = msg.payload
        if not topic.startswith(self.topics.control):
            # not a command, and not ours to answer: amqtt 0.12 can hand a client that
            # reconnected after an abrupt drop its own last will (our status topic)
            log.debug("ignored a message on %s: not a control topic", topic)
            return
        self.received += 1
        leaf = topic[len(self.topics.control) :]
        if leaf.startswith(HUMANOID_LEAF):
            self._humanoid(topic, leaf[len(HUMANOID_LEAF) :], payload)
            return
        parser = self._parsers.get(leaf)
        if parser is None:
            self._error(
                topic,
                payload,
                f"unknown control topic {leaf!r} (topics: {', '.join(sorted(self._parsers))}, "
                f"humanoid/{{{','.join(HUMANOID_COMMANDS)}}})",
            )
            return
        try:
            command = parser(payload)
        except AnimaError as exc:
            self._error(topic, payload, str(exc))
            return
        except Exception as exc:  # a parser bug must cost one message, not paho's thread
            log.exception("parsing a message on %s failed", topic)
            self._error(topic, payload, f"internal error: {exc!r}")
            return
        self.dispatcher.submit(command, Origin("mqtt", topic, excerpt(payload)))

    # ------------------------------------------------------------------ the humanoid
    def _humanoid(self, topic: str, command: str, payload: bytes) -> None:
        """Parse on paho's thread (quick); the gRPC call runs on the door's humanoid worker."""
        try:
            request = parse_humanoid(command, payload)
        except AnimaError as exc:
            self._error(topic, payload, str(exc))
            return
        link = self.runtime.humanoid
        worker = self._humanoid_worker
        if link is None or link.client is None or worker is None:
            self._error(topic, payload, NO_HUMANOID)
            return
        with self._humanoid_lock:
            if self._humanoid_pending >= MAX_HUMANOID_PENDING:
                full = f"too many pending humanoid commands ({MAX_HUMANOID_PENDING}); try again"
                self._error(topic, payload, full)
                return
            self._humanoid_pending += 1
        worker.submit(self._run_humanoid, topic, payload, request)

    def _run_humanoid(self, topic: str, payload: bytes, request: HumanoidRequest) -> None:
        try:
            link = self.runtime.humanoid
            if link is None or link.client is None:
                raise AnimaError(NO_HUMANOID)
            answer = request.call(link.client)
        except AnimaError as exc:
            self._error(topic, payload, str(exc))
        except Exception as exc:  # a bug must cost one command, not the worker
            log.exception("humanoid command on %s failed", topic)
            self._error(topic, payload, f"internal error: {exc!r}")
        else:
            body = _json(command=request.command, request=excerpt(payload), answer=answer)
            self._publish(self.topics.feedback("humanoid"), body, qos=1)
        finally:
            with self._humanoid_lock:
                self._humanoid_pending -= 1

    # ------------------------------------------------------------------ publishing
    def _publish(self, topic: str, payload: str, *, qos: int = 0, retain: bool = False) -> None:
        client = self._client
        if client is not None:
            client.publish(topic, payload, qos=qos, retain=retain)

    def _error(self, topic: str, payload: bytes | str, reason: str) -> None:
        self.rejected += 1
        if self.rejected <= 20 or self.rejected % 1000 == 0:
            log.warning("rejected %s: %s", topic, reason)
        self._publish(
            self.topics.feedback("error"),
            _json(topic=topic, payload=excerpt(payload), reason=reason),
            qos=1,
        )

    def _on_event(self, event: Event) -> None:
        t = self.topics
        if isinstance(event, SpeechStarted):
            body = _json(id=event.utterance, text=event.text, locale=event.locale)
            self._publish(t.feedback("start_speak"), body, qos=1)
        elif isinstance(event, SpeechEnded):
            self._publish(
                t.feedback("end_speak"), _json(id=event.utterance, reason=event.reason), qos=1
            )
        elif isinstance(event, CommandRejected):
            if event.source == "mqtt":  # others are reported by their own front door
                self.rejected += 1
                body = _json(topic=event.command, payload=event.argument, reason=event.reason)
                self._publish(t.feedback("error"), body, qos=1)
        elif isinstance(event, Notice):
            self._publish(t.feedback("notice"), _json(source=event.source, message=event.message))
        elif isinstance(event, MoveFinished) and event.name in self.runtime.library:
            body = _json(name=event.name, cut=event.cut, reason=event.reason or "done")
            self._publish(t.feedback("animation_done"), body, qos=1)

    def _on_agent_event(self, event: Event) -> None:
        """The voice agent: ``…/agent/asr``, ``…/agent/plan``, ``…/agent/action_status``."""
        p = self.config.prefix
        if isinstance(event, Transcript):
            self._publish(f"{p}/agent/asr", _json(text=event.text, final=event.final))
        elif isinstance(event, WakeDetected):
            self._publish(f"{p}/agent/asr", _json(wake=event.source, phrase=event.phrase))
        elif isinstance(event, ListenTimeout):
            self._publish(
                f"{p}/agent/asr", _json(timeout=event.reason, waited_s=round(event.waited_s, 2))
            )
        elif isinstance(event, PlanStarted):
            body = _json(id=event.plan, steps=list(event.steps), source=event.source)
            self._publish(f"{p}/agent/plan", body, qos=1)
        elif isinstance(event, PlanFinished):
            body = _json(id=event.plan, outcome=event.outcome, feedback=event.feedback)
            self._publish(f"{p}/agent/plan", body, qos=1)
        elif isinstance(event, ActionStatus):
            body = _json(
                plan=event.plan,
                index=event.index,
                action=event.action,
                step=event.step,
                status=event.status,
                message=event.message,
            )
            self._publish(f"{p}/agent/action_status", body, qos=1)

    def state_payload(self) -> str:
        return _json(**runtime_state(self.runtime))

    def _publish_state(self) -> None:
        period = 1.0 / self.config.state_hz
        while not self._stop.wait(period):
            if self._connected.is_set():
                try:
                    self._publish(self.topics.state, self.state_payload(), retain=True)
                    link = self.runtime.humanoid
                    if link is not None and link.state is not None:
                        body = _json(**dataclasses.asdict(link.state), error=link.error)
                        self._publish(self.topics.humanoid_state, body, retain=True)
                except Exception:  # the state is best effort; the next one will do
                    log.exception("state publish failed")
