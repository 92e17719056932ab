"""Runtime events on the door's feedback topics (the table is :mod:`anima.wire.feedback`).

Nadine's ``start_speak``/``end_speak``/``error`` plus ``animation_done`` and ``notice``, and
the voice agent's ``…/agent/asr``, ``…/agent/plan`` and ``…/agent/action_status``. The door
decides which events are its own to tell: refusals of MQTT commands only (the other doors tell
theirs), ``animation_done`` for the library's animations only.
"""

from __future__ import annotations

from collections.abc import Callable, Container

from anima.events import CommandRejected, Event, EventHub, MoveFinished
from anima.wire.feedback import FEEDBACK_KINDS, encode_event
from anima.wire.topics import Topics

Publish = Callable[..., None]  # (topic, payload, *, qos=0, retain=False)


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
        return [events.subscribe(self._on_event, *FEEDBACK_KINDS)]

    def _on_event(self, event: Event) -> None:
        if isinstance(event, CommandRejected):
            if event.source != "mqtt":
                return  # others are reported by their own front door
            self._rejected()
        elif isinstance(event, MoveFinished) and event.name not in self._library:
            return  # a posture's reset, a gaze move: not an animation asked for
        message = encode_event(event, self.topics)
        if message is not None:
            self._publish(message.topic, message.payload, qos=message.qos)
