"""Ears for a running runtime: listen here, let `anima serve --agent` plan and act there.

``anima agent`` runs the listening pipeline on this machine (its microphone, a WAV file, stdin)
and talks to a running runtime over MQTT: a wake becomes ``…/agent/control/listen`` (which
interrupts whatever the runtime's agent is doing), a final transcript ``…/agent/control/ask``
(the reading the runtime's understanding reads, when Whisper's best one reads as nothing: the
other readings and reading again are chosen here, where the recognizer is).
It gates its listener while the robot speaks (``start_speak``/``end_speak``), so the robot's
voice is not taken for a request, and reports the agent's progress as it arrives: one line per
message, at most :data:`MAX_REPORTED` characters of it (whatever a publisher sends on those
topics), and no message can raise out of paho's callback (that would end its network thread).
"""

from __future__ import annotations

import contextlib
import json
import logging
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from anima.events import Transcript, WakeDetected
from anima.listening.listener import Listener
from anima.wire.mqtt import BrokerAddress, Credentials, connack_reason, new_client
from anima.wire.topics import Topics

if TYPE_CHECKING:
    from anima.listening.results import ListenResult

log = logging.getLogger(__name__)

_REPORTED = ("asr", "plan", "action_status", "feedback/start_speak", "feedback/end_speak")
MAX_REPORTED = 300  # characters of a message shown in its report line
_MAX_DECODED = 65536  # bytes: larger payloads are shown as text, not decoded as JSON


class RemoteEars:
    """A :class:`Listener` whose wakes and transcripts go to a runtime over MQTT."""

    def __init__(
        self,
        listener_factory: Callable[[RemoteEars], Listener],
        address: BrokerAddress,
        prefix: str,
        report: Callable[[str], None],
        *,
        choose: Callable[[Transcript], str] | None = None,
        credentials: Credentials | None = None,
    ) -> None:
        """``choose``: the words of a final to ask (its best reading, or another the
        understanding reads: :func:`~anima.agent.understanding.readings.choose_reading`).
        ``credentials``: the broker's login and TLS (the config's ``mqtt:`` section)."""
        self.topics = Topics(prefix)
        self.credentials = credentials or Credentials()
        self._refusal = ""
        self._answered = threading.Event()  # connected or refused
        self._choose = choose
        self.address = address
        self._report = report
        self._client: Any = None
        self._connected = threading.Event()
        self.listener = listener_factory(self)

    def start(self, timeout: float = 5.0) -> None:
        client = new_client(self.credentials, client_id="")
        client.on_connect = self._on_connect
        client.on_message = self._on_message
        client.reconnect_delay_set(0.25, 2)  # floats work (paho types them int)
        client.connect_async(self.address.host, self.address.port)
        client.loop_start()
        self._client = client
        self._answered.wait(timeout)
        if not self._connected.is_set():
            self.stop()
            if self._refusal:
                raise ConnectionError(f"the MQTT broker at {self.address} refused: {self._refusal}")
            raise ConnectionError(f"no MQTT broker answers at {self.address}")
        self.listener.start()

    def stop(self) -> None:
        self.listener.stop()
        if self._client is not None:
            self._client.disconnect()
            self._client.loop_stop()
            self._client = None

    # ------------------------------------------------------------------ listener → runtime
    def take(self, result: ListenResult) -> None:
        """What the listener sends up (the ears are its consumer): a wake and a final go to
        the runtime; the rest stays here."""
        match result:
            case WakeDetected():
                self.on_wake(result)
            case Transcript(final=True):
                self.on_final(result)

    def on_wake(self, event: WakeDetected) -> None:
        self._publish("listen", event.source)
        self._report(f"wake ({event.source}): listening")

    def on_final(self, transcript: Transcript) -> None:
        if not transcript.text.strip():
            return
        text = self._choose(transcript) if self._choose is not None else transcript.text.strip()
        if text != transcript.text.strip():
            self._report(f"heard {transcript.text.strip()[:60]!r}, asking {text[:60]!r}")
        self._publish("ask", text)

    def _publish(self, leaf: str, payload: str) -> None:
        if self._client is not None:
            self._client.publish(f"{self.topics.control}{leaf}", payload, qos=1)

    # ------------------------------------------------------------------ runtime → here
    def _on_connect(self, client: Any, _u: Any, _f: Any, reason: Any, _p: Any) -> None:
        if reason.is_failure:
            self._refusal = connack_reason(reason)
            self._answered.set()  # a bad login does not fix itself: start() says so at once
            return
        for leaf in _REPORTED:
            client.subscribe(f"{self.topics.prefix}/agent/{leaf}", qos=1)
        self._connected.set()
        self._answered.set()

    def _on_message(self, _client: Any, _userdata: Any, msg: Any) -> None:
        try:
            leaf = msg.topic[len(self.topics.prefix) + len("/agent/") :]
            if leaf.endswith("start_speak"):
                self.listener.gate(True)
            elif leaf.endswith("end_speak"):
                self.listener.gate(False)
            self._report(f"{leaf}: {shown(msg.payload)}")
        except Exception:  # paho ends its network thread on an exception: never let one out
            log.exception("a message on %s could not be reported", str(msg.topic)[:80])


def shown(payload: bytes, limit: int = MAX_REPORTED) -> str:
    """A message's payload for a report line: decoded JSON when small, at most ``limit``
    characters, whatever it holds (nesting, bytes that are not text, megabytes)."""
    text = payload[: limit * 4].decode("utf-8", "replace")
    if len(payload) <= _MAX_DECODED:
        with contextlib.suppress(ValueError, RecursionError):  # not JSON, not text, too deep
            text = str(json.loads(payload))
    return text if len(text) <= limit else text[:limit] + "…"
