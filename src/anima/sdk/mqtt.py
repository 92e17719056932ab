"""The Robot's backend for a running ``anima serve``, over its MQTT contract (``docs/mqtt.md``).

A paho-mqtt 2 client publishes on ``<prefix>/agent/control/…`` and listens to
``<prefix>/agent/feedback/#``, the retained state and the retained status. Utterance ids are
assigned by the runtime, so a ``say()`` is paired with the first ``start_speak`` carrying its
text that arrives after it was sent, then with that id's ``end_speak``. Refusals arrive on the
error topic and fail the handle they belong to (CommandRejectedByRobotError with the reason).

A command is published only while this client is connected and the robot's retained status
says ``online``: during an outage (this link down, the robot's link down, its broker
restarting — a broker that keeps no session would drop what is published before the robot
subscribes again) it is held, up to the Robot's timeout, then refused with
RobotNotConnectedError saying so. At most ``MAX_HELD`` commands wait at once.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import os
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from anima.errors import (
    CommandRejectedByRobotError,
    NotSupportedError,
    RobotNotConnectedError,
    RobotTimeoutError,
)
from anima.events import (
    CommandRejected,
    Event,
    EventHub,
    MoveFinished,
    SpeechEnded,
    SpeechStarted,
)
from anima.sdk.backend import (
    IDLE_ANIMATIONS,
    RobotSnapshot,
    check_point,
    hub_kind,
    snapshot_from_state,
)
from anima.sdk.handles import AnimationHandle, HandleBook, SpeechHandle
from anima.sdk.humanoid import HumanoidActions
from anima.sdk.mqtt_humanoid import MqttHumanoid, PendingCalls
from anima.wire.feedback import decode_event
from anima.wire.jsontypes import JsonObject
from anima.wire.mqtt import Credentials, connack_reason, new_client, parse_url, url_credentials

if TYPE_CHECKING:
    pass

log = logging.getLogger(__name__)

_EXCERPT = 120  # characters of a payload the error topic quotes (frontdoors.payloads.excerpt)
MAX_HELD = 100  # commands held at once while the robot is not online (more: refused at once)


def _excerpt(text: str) -> str:
    text = text.replace("\n", "\\n")
    return text if len(text) <= _EXCERPT else text[:_EXCERPT] + "…"


class MqttBackend:
    """A client of one robot's topics; ``open()`` connects, ``close()`` disconnects."""

    def __init__(
        self, url: str, prefix: str = "nadine", credentials: Credentials | None = None
    ) -> None:
        self.host, self.port = parse_url(url)
        self.credentials = url_credentials(url, credentials or Credentials())
        self.prefix = prefix
        scheme = "mqtts" if self.credentials.tls else "mqtt"
        self.description = f"{scheme}://{self.host}:{self.port} prefix {prefix}"
        self._refusal = ""  # the broker's CONNACK refusal, when it gave one
        self._answered = threading.Event()  # subscribed or refused
        self._control = f"{prefix}/agent/control/"
        self._feedback = f"{prefix}/agent/feedback/"
        self._book = HandleBook()
        self._events = EventHub()  # user callbacks run on its thread, never on paho's
        self._client: Any = None
        self._subscribed = threading.Event()
        self._subscription = -1
        self._cond = threading.Condition()
        self._status = ""  # the retained <prefix>/agent/status: online | offline
        self._state: RobotSnapshot | None = None
        self._humanoid_state: JsonObject | None = None  # <prefix>/agent/humanoid/state
        self._humanoid_calls = PendingCalls()  # sent, answer not yet here
        self._timeout = 30.0  # the Robot's, from open()
        self._held = 0  # commands waiting for the robot to be online
        self._speaking: set[str] = set()  # utterances started and not yet ended

    # ------------------------------------------------------------------ lifecycle
    def open(self, timeout: float) -> None:
        self._timeout = timeout
        client_id = f"anima-sdk-{os.getpid()}-{id(self):x}"
        client = new_client(self.credentials, client_id=client_id)
        client.reconnect_delay_set(0.25, 2)  # floats work (paho types it int)
        client.on_connect = self._on_connect
        client.on_subscribe = self._on_subscribe
        client.on_disconnect = self._on_disconnect
        client.on_message = self._on_message
        self._client = client
        self._events.start()
        client.connect_async(self.host, self.port, keepalive=30)
        client.loop_start()
        deadline = time.monotonic() + timeout
        self._answered.wait(timeout)  # subscribed, or refused: a bad login does not fix itself
        if not self._subscribed.is_set():
            self.close()
            if self._refusal:
                raise RobotNotConnectedError(
                    f"the MQTT broker at {self.host}:{self.port} refused the connection: "
                    f"{self._refusal}"
                )
            raise RobotNotConnectedError(
                f"no MQTT broker answered at {self.host}:{self.port} within {timeout:g} s"
                + (" (over TLS: is it a TLS listener?)" if self.credentials.tls else "")
            )
        with self._cond:
            online = self._cond.wait_for(
                lambda: self._status == "online", max(0.0, deadline - time.monotonic())
            )
        if not online:
            self.close()
            status = self._status or "no status"
            raise RobotNotConnectedError(
                f"no anima runtime is online on {self.prefix}/agent/status ({status}) at "
                f"{self.host}:{self.port}: is `anima serve` running with mqtt.prefix {self.prefix}?"
            )

    def close(self) -> None:
        client, self._client = self._client, None
        self._subscribed.clear()  # a disconnect we asked for, not one to warn about
        if client is not None:
            client.disconnect()
            client.loop_stop()
        self._events.stop()
        self._book.close(RobotNotConnectedError(f"the connection to {self.description} closed"))

    # ------------------------------------------------------------------ paho callbacks
    def _on_connect(self, client: Any, _u: Any, _f: Any, reason: Any, _p: Any) -> None:
        if reason.is_failure:
            self._refusal = connack_reason(reason)
            log.warning("MQTT connection to %s refused: %s", self.description, self._refusal)
            self._answered.set()
            return
        topics = [(self._feedback + "#", 1), (f"{self.prefix}/agent/state", 0)]
        topics.append((f"{self.prefix}/agent/status", 1))
        topics.append((f"{self.prefix}/agent/humanoid/state", 0))
        _rc, self._subscription = client.subscribe(topics)

    def _on_subscribe(self, _c: Any, _u: Any, mid: int, reasons: Any, _p: Any) -> None:
        if mid == self._subscription and not any(r.is_failure for r in reasons):
            with self._cond:
                self._subscribed.set()
                self._cond.notify_all()
            self._answered.set()

    def _on_disconnect(self, _c: Any, _u: Any, _f: Any, reason: Any, _p: Any) -> None:
        if self._subscribed.is_set():
            log.warning("MQTT disconnected from %s (%s): reconnecting", self.description, reason)
        with self._cond:
            self._subscribed.clear()
            self._status = ""  # unknown until the retained status comes again

    def _on_message(self, _c: Any, _u: Any, msg: Any) -> None:
        topic: str = msg.topic
        try:
            if topic == f"{self.prefix}/agent/status":
                with self._cond:
                    self._status = bytes(msg.payload).decode("utf-8", "replace")
                    self._cond.notify_all()
            elif topic == f"{self.prefix}/agent/state":
                snapshot = snapshot_from_state(json.loads(msg.payload))
                with self._cond:
                    self._state = snapshot
                    if not snapshot.speaking:  # nothing plays: no end_speak can be missing
                        self._speaking.clear()
                    self._cond.notify_all()
            elif topic == f"{self.prefix}/agent/humanoid/state":
                data = json.loads(msg.payload)
                with self._cond:
                    self._humanoid_state = data
                    self._cond.notify_all()
            elif topic.startswith(self._feedback):
                self._on_feedback(topic[len(self._feedback) :], json.loads(msg.payload))
        except (ValueError, KeyError, TypeError) as exc:  # a newer runtime's payload, a stranger's
            log.warning("ignored a message on %s: %s", topic, exc)

    def _on_feedback(self, leaf: str, data: JsonObject) -> None:
        if leaf == "humanoid":
            command, request = str(data["command"]), str(data["request"])
            self._humanoid_calls.answered(command, request, str(data["answer"]), None)
            return
        event = decode_event("feedback/" + leaf, data)  # the door's own table (anima.wire)
        if event is not None:
            self._follow(event)  # before the handles finish: state() agrees with what ended
        book = self._book
        if isinstance(event, SpeechStarted):
            book.speech_started(event.utterance, event.text)
        elif isinstance(event, SpeechEnded):
            book.speech_ended(event.utterance, event.reason)
        elif isinstance(event, MoveFinished):
            book.animation_ended(event.name, event.reason or "done")
        elif isinstance(event, CommandRejected):
            event = dataclasses.replace(event, source="mqtt")
            self._refused(event)
        if event is not None:
            self._events.publish(event)

    def _follow(self, event: Event) -> None:
        """The cached state moved on by an event: the retained state comes 4 times a second,
        so without this ``state().speaking`` was still true up to 250 ms after a ``say(wait=
        True)`` returned. A state message published later replaces it as ever."""
        with self._cond:
            state = self._state
            if state is None:
                return
            if isinstance(event, SpeechStarted):
                self._speaking.add(event.utterance)
                state = dataclasses.replace(state, speaking=True)
            elif isinstance(event, SpeechEnded):
                self._speaking.discard(event.utterance)
                if not self._speaking:
                    state = dataclasses.replace(state, speaking=False)
            elif isinstance(event, MoveFinished) and state.move == event.name and not state.queued:
                state = dataclasses.replace(state, move=None)
            else:
                return
            self._state = dataclasses.replace(state, t=max(state.t, event.t))
            self._cond.notify_all()

    def _refused(self, event: CommandRejected) -> None:
        error = CommandRejectedByRobotError(event.command, event.reason)
        leaf = (
            event.command[len(self._control) :] if event.command.startswith(self._control) else ""
        )
        if leaf.startswith("humanoid/"):
            self._humanoid_calls.answered(leaf[len("humanoid/") :], event.argument, None, error)
        else:
            self._book.refused_command(leaf, event.argument, error)

    # ------------------------------------------------------------------ publishing
    def _send(self, leaf: str, payload: str = "") -> None:
        if self._client is None:
            raise RobotNotConnectedError(f"not connected to {self.description}")
        self._hold(self._control + leaf)
        client = self._client
        if client is None:
            raise RobotNotConnectedError(f"not connected to {self.description}")
        info = client.publish(self._control + leaf, payload, qos=1)
        info.wait_for_publish(5.0)
        if not info.is_published():
            raise RobotTimeoutError(f"{self._control + leaf}: the broker did not acknowledge it")

    def _hold(self, topic: str) -> None:
        """Return once connected with the robot ``online``; RobotNotConnectedError after the
        Robot's timeout, or at once when ``MAX_HELD`` commands already wait."""

        def ready() -> bool:
            return self._subscribed.is_set() and self._status == "online"

        with self._cond:
            if ready():
                return
            if self._held >= MAX_HELD:
                raise RobotNotConnectedError(
                    f"{topic}: not sent: {MAX_HELD} commands already wait for the robot on "
                    f"{self.description} to be online"
                )
            self._held += 1
            try:
                if self._cond.wait_for(ready, self._timeout):
                    return
            finally:
                self._held -= 1
            link = "connected" if self._subscribed.is_set() else "not connected to the broker"
            raise RobotNotConnectedError(
                f"{topic}: not sent: the robot on {self.description} is not online "
                f"(status {self._status or 'unknown'}, {link}) after {self._timeout:g} s"
            )

    def say(self, text: str, locale: str, timeout: float) -> SpeechHandle:
        payload = json.dumps({"text": text, "locale": locale}, ensure_ascii=False)
        handle = SpeechHandle(text, self.stop_speaking, timeout)
        handle.payload = _excerpt(payload)
        with self._book.sending(handle):
            self._send("speak", payload)
        return handle

    def stop_speaking(self) -> None:
        self._send("stop_speak")

    def play(self, name: str, timeout: float) -> AnimationHandle:
        handle = AnimationHandle(name, lambda: self.cancel_animation(name), timeout)
        handle.payload = _excerpt(name.strip())
        if name in IDLE_ANIMATIONS:  # a guess: the wire does not say (see IDLE_ANIMATIONS)
            self._send("animation", name)
            handle.finish("done")
            return handle
        with self._book.sending(handle):
            self._send("animation", name)
        return handle

    def stop_animation(self) -> None:
        self._send("stop_animation")

    def cancel_animation(self, name: str) -> None:
        self._send("cancel_animation", name)

    def look_at(self, x: float, y: float, z: float) -> None:
        check_point(x, y, z)
        self._send("look_at", json.dumps({"x": x, "y": y, "z": z}))

    def look_at_target(self, name: str) -> None:
        self._send("look_at_target", name)

    def end_look_at(self) -> None:
        # the contract's way: the default posture as a gaze target clears the latch
        self._send("look_at_target", "LOOKUPPostureDefault")

    def estop(self) -> None:
        self._send("estop")

    def reset(self) -> None:
        self._send("reset")

    # ------------------------------------------------------------------ state and events
    def state(self, timeout: float) -> RobotSnapshot:
        if self._client is None:
            raise RobotNotConnectedError(f"not connected to {self.description}")
        with self._cond:
            if not self._cond.wait_for(lambda: self._state is not None, timeout):
                raise RobotTimeoutError(
                    f"no state on {self.prefix}/agent/state within {timeout:g} s"
                )
            assert self._state is not None
            return self._state

    def subscribe(self, kind: str, fn: Callable[[Event], None]) -> Callable[[], None]:
        return self._events.subscribe(fn, hub_kind(kind))

    def humanoid(self) -> HumanoidActions:
        if self.state(self._timeout).humanoid is None:
            raise NotSupportedError(
                f"no humanoid is linked to the runtime on {self.prefix} "
                "(anima serve --humanoid sim|adam)"
            )
        return HumanoidActions(MqttHumanoid(self))

    # ------------------------------------------------------------------ the humanoid
    def humanoid_call(self, command: str, payload: str) -> str:
        """Publish on ``control/humanoid/<command>``; the robot's answer, or its refusal as
        CommandRejectedByRobotError (RobotTimeoutError when neither comes in time)."""
        call = self._humanoid_calls.open(command, _excerpt(payload))
        try:
            self._send(f"humanoid/{command}", payload)
            if not call.done.wait(self._timeout):
                raise RobotTimeoutError(
                    f"{self._control}humanoid/{command}: no answer within {self._timeout:g} s"
                )
        finally:
            self._humanoid_calls.forget(call)
        if call.error is not None:
            raise call.error
        return call.answer

    def humanoid_state(self) -> JsonObject:
        with self._cond:
            if not self._cond.wait_for(lambda: self._humanoid_state is not None, self._timeout):
                raise RobotTimeoutError(
                    f"no state on {self.prefix}/agent/humanoid/state within {self._timeout:g} s"
                )
            assert self._humanoid_state is not None
            return self._humanoid_state
