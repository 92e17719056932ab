"""Events as JSON and back, driven by the event dataclasses (the WebSocket's ``"type":"event"``
messages, ``anima record``'s event lines): ``kind`` plus the event's own fields, by name."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from anima import events as ev
from anima.events import Event


def _kinds() -> dict[str, type[Event]]:
    found: dict[str, type[Event]] = {}
    for value in vars(ev).values():
        if isinstance(value, type) and issubclass(value, Event) and value is not Event:
            found[value.kind] = value
    return found


EVENT_TYPES: dict[str, type[Event]] = _kinds()  # every event, by its kind


def event_fields(event: Event) -> dict[str, Any]:
    """An event as JSON-ready fields: its ``kind`` and its dataclass fields."""
    return {"kind": event.kind, **dataclasses.asdict(event)}


def event_from_fields(data: Mapping[str, Any]) -> Event | None:
    """The event :func:`event_fields` made (lists back to tuples); None for a kind this
    version does not know. Keys it does not know are read past; TypeError when a field the
    event needs is missing."""
    cls = EVENT_TYPES.get(str(data.get("kind")))
    if cls is None:
        return None
    values: dict[str, Any] = {}
    for f in dataclasses.fields(cls):
        if f.name in data:
            value = data[f.name]
            values[f.name] = tuple(value) if isinstance(value, list) else value
    return cls(**values)
