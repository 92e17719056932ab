"""Runtime events as the MQTT feedback messages, and those messages back as events: one table.

Nadine's ``…/agent/feedback/{start_speak,end_speak,error}`` plus ``animation_done`` and
``notice``, and the voice agent's ``…/agent/asr``, ``…/agent/plan`` and
``…/agent/action_status`` (``docs/mqtt.md`` has the payloads). Each row of :data:`ROUTES` names
an event's topic under ``<prefix>/agent/``, its QoS, and its fields on the wire (the event's
field → the payload's key), so the door's encoding and the SDK's decoding cannot drift apart.
Every payload also carries ``t``, when the event happened on the runtime's clock (seconds, as
the state's ``t``), unless the event has none (0).
"""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from anima.events import (
    ActionStatus,
    AttentionChanged,
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
from anima.wire import encode
from anima.wire.jsontypes import JsonDict
from anima.wire.topics import Topics


@dataclass(frozen=True)
class Route:
    """Where one kind of event goes, and how its fields are named there."""

    event: type[Event]
    leaf: str  # under <prefix>/agent/: "feedback/start_speak", "asr", …
    qos: int
    keys: Mapping[str, str]  # the event's field → the payload's key, in payload order
    optional: frozenset[str] = frozenset()  # fields left out when None or empty
    digits: Mapping[str, int] = field(default_factory=dict)  # fields rounded on the wire
    empty: Mapping[str, object] = field(default_factory=dict)  # what an empty field says

    @functools.cached_property
    def required(self) -> frozenset[str]:
        """The payload keys every message of this kind carries (its event's required fields)."""
        needed = {
            f.name
            for f in dataclasses.fields(self.event)
            if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
        }
        return frozenset(k for n, k in self.keys.items() if n in needed and n not in self.optional)


def _same(*names: str) -> dict[str, str]:
    return {n: n for n in names}


ROUTES: tuple[Route, ...] = (
    Route(SpeechStarted, "feedback/start_speak", 1, {"utterance": "id", **_same("text", "locale")}),
    Route(SpeechEnded, "feedback/end_speak", 1, {"utterance": "id", "reason": "reason"}),
    Route(
        CommandRejected,
        "feedback/error",
        1,
        {"command": "topic", "argument": "payload", "reason": "reason"},
    ),
    Route(Notice, "feedback/notice", 0, _same("source", "message")),
    # a gesture that ran to its end says so: reason "done"
    Route(
        MoveFinished,
        "feedback/animation_done",
        1,
        _same("name", "cut", "reason"),
        empty={"reason": "done"},
    ),
    Route(
        Transcript,
        "asr",
        0,
        _same("text", "final", "confidence", "alternatives", "voiced_s"),
        optional=frozenset({"confidence", "alternatives", "voiced_s"}),
        digits={"confidence": 3, "voiced_s": 2},
    ),
    Route(WakeDetected, "asr", 0, {"source": "wake", "phrase": "phrase"}),
    Route(
        ListenTimeout,
        "asr",
        0,
        {"reason": "timeout", "waited_s": "waited_s"},
        digits={"waited_s": 2},
    ),
    Route(PlanStarted, "plan", 1, {"plan": "id", **_same("steps", "source")}),
    Route(PlanFinished, "plan", 1, {"plan": "id", **_same("outcome", "feedback")}),
    Route(
        ActionStatus,
        "action_status",
        1,
        _same("plan", "index", "action", "step", "status", "message"),
    ),
    # social attention's target changed (docs/attention.md): at most a few a second
    Route(
        AttentionChanged,
        "attention",
        0,
        _same("target", "person", "azimuth_deg", "elevation_deg", "reason"),
        digits={"azimuth_deg": 1, "elevation_deg": 1},
    ),
)
BY_EVENT: dict[type[Event], Route] = {r.event: r for r in ROUTES}
FEEDBACK_KINDS: tuple[str, ...] = tuple(r.event.kind for r in ROUTES)  # what a door subscribes to


@dataclass(frozen=True)
class Message:
    topic: str
    payload: str
    qos: int


def encode_event(event: Event, topics: Topics) -> Message | None:
    """The feedback message for ``event`` (None for a kind that has none)."""
    route = BY_EVENT.get(type(event))
    if route is None:
        return None
    fields: JsonDict = {}
    for name, key in route.keys.items():
        value = getattr(event, name)
        if name in route.optional and value in (None, (), ""):
            continue
        if not value and name in route.empty:
            value = route.empty[name]
        if name in route.digits and value is not None:
            value = round(value, route.digits[name])
        fields[key] = list(value) if isinstance(value, tuple) else value
    if event.t:  # when it happened, on the runtime's clock (0: not tied to one, left out)
        fields["t"] = round(event.t, 3)
    return Message(f"{topics.prefix}/agent/{route.leaf}", encode(**fields), route.qos)


def decode_event(leaf: str, data: Mapping[str, Any]) -> Event | None:
    """The event a feedback message under ``<prefix>/agent/`` carries: None when ``leaf`` is no
    feedback topic, or the payload lacks a key every kind of that topic needs. Keys the table
    does not know (a newer runtime's) are read past."""
    for route in ROUTES:
        if route.leaf != leaf:
            continue
        keys = {key: name for name, key in route.keys.items()}
        if not route.required <= data.keys():
            continue  # another kind on the same topic (asr: a transcript, a wake, a time out)
        values = {keys[k]: v for k, v in data.items() if k in keys}
        for name, value in values.items():
            if isinstance(value, list):
                values[name] = tuple(value)
        t = data.get("t")
        if isinstance(t, int | float) and not isinstance(t, bool) and math.isfinite(t):
            values["t"] = float(t)
        return route.event(**values)
    return None
