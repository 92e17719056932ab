"""Runtime events as the door's feedback topics (``docs/mqtt.md`` has the payloads).

Nadine's ``start_speak``/``end_speak``/``error`` plus ``animation_done`` and ``notice``, and
the voice agent's ``…/agent/asr``, ``…/agent/plan`` and ``…/agent/action_status``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Container
from typing import Any

from anima.events import (
    ActionStatus,
    CommandRejected,
    Event,
    EventHub,
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
from anima.frontdoors.mqtt.topics import PAYLOAD_VERSION, Topics

Publish = Callable[..., None]  # (topic, payload, *, qos=0, retain=False)


def payload(**fields: Any) -> str:
    """A JSON payload as anima publishes it: compact, with ``"v"``."""
    return json.dumps({"v": PAYLOAD_VERSION, **fields}, separators=(",", ":"))


class Feedback:
    """Publishes runtime events on the feedback topics; ``rejected`` counts MQTT refusals."""

    def __init__(
        self,
        topics: Topics,
        publish: Publish,
        library: Container[str],
        rejected: Callable[[], None],
    ) -> None:
        self.topics = topics
        self._publish = publish
        self._library = library
        self._rejected = rejected

    def subscribe(self, events: EventHub) -> list[Callable[[], None]]:
        """Subscribe to ``events``; returns the unsubscribe calls."""
        return [
            events.subscribe(self._on_event, SpeechStarted.kind, SpeechEnded.kind),
            events.subscribe(self._on_event, CommandRejected.kind, Notice.kind),
            events.subscribe(self._on_event, MoveFinished.kind),
            events.subscribe(self._on_agent_event, Transcript.kind, WakeDetected.kind),
            events.subscribe(self._on_agent_event, PlanStarted.kind, PlanFinished.kind),
            events.subscribe(self._on_agent_event, ActionStatus.kind, ListenTimeout.kind),
        ]

    def _on_event(self, event: Event) -> None:
        t = self.topics
        if isinstance(event, SpeechStarted):
            body = payload(id=event.utterance, text=event.text, locale=event.locale)
            self._publish(t.feedback("start_speak"), body, qos=1)
        elif isinstance(event, SpeechEnded):
            self._publish(
                t.feedback("end_speak"), payload(id=event.utterance, reason=event.reason), qos=1
            )
        elif isinstance(event, CommandRejected):
            if event.source == "mqtt":  # others are reported by their own front door
                self._rejected()
                body = payload(topic=event.command, payload=event.argument, reason=event.reason)
                self._publish(t.feedback("error"), body, qos=1)
        elif isinstance(event, Notice):
            self._publish(t.feedback("notice"), payload(source=event.source, message=event.message))
        elif isinstance(event, MoveFinished) and event.name in self._library:
            body = payload(name=event.name, cut=event.cut, reason=event.reason or "done")
            self._publish(t.feedback("animation_done"), body, qos=1)

    def _on_agent_event(self, event: Event) -> None:
        """The voice agent: ``…/agent/asr``, ``…/agent/plan``, ``…/agent/action_status``."""
        p = self.topics.prefix
        if isinstance(event, Transcript):
            # confidence: Whisper's (0–1); pocketsphinx gives none, and the field is left out
            sure: dict[str, object] = {}
            if event.confidence is not None:
                sure["confidence"] = round(event.confidence, 3)
            if event.alternatives:  # Whisper's other readings, best first
                sure["alternatives"] = list(event.alternatives)
            self._publish(f"{p}/agent/asr", payload(text=event.text, final=event.final, **sure))
        elif isinstance(event, WakeDetected):
            self._publish(f"{p}/agent/asr", payload(wake=event.source, phrase=event.phrase))
        elif isinstance(event, ListenTimeout):
            self._publish(
                f"{p}/agent/asr", payload(timeout=event.reason, waited_s=round(event.waited_s, 2))
            )
        elif isinstance(event, PlanStarted):
            body = payload(id=event.plan, steps=list(event.steps), source=event.source)
            self._publish(f"{p}/agent/plan", body, qos=1)
        elif isinstance(event, PlanFinished):
            body = payload(id=event.plan, outcome=event.outcome, feedback=event.feedback)
            self._publish(f"{p}/agent/plan", body, qos=1)
        elif isinstance(event, ActionStatus):
            body = payload(
                plan=event.plan,
                index=event.index,
                action=event.action,
                step=event.step,
                status=event.status,
                message=event.message,
            )
            self._publish(f"{p}/agent/action_status", body, qos=1)
