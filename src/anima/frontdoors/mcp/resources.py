"""The MCP server's resources, with no MCP in it: what ``resources/read`` returns for each
URI and when a subscriber is told one changed.

``anima://state`` (the typed state every door sends), ``anima://events`` (the recent events,
``mcp.events_kept`` of them), ``anima://animations``, ``anima://body`` and
``anima://attention`` (null without a camera or a microphone array), ``anima://memory`` (what
the robot remembers of people, newest first; null with memory off) and ``anima://persona`` (who
the voice agent is; null without one). A watcher thread compares
the state at ``mcp.state_hz``, its clock's fields left out: a subscriber is told when something
changed, not at every poll.
"""

from __future__ import annotations

import collections
import json
import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from anima.config.mcp import McpConfig
from anima.events import Event
from anima.frontdoors.state import animations_description, body_description
from anima.wire import PAYLOAD_VERSION
from anima.wire.events import event_fields
from anima.wire.jsontypes import JsonObject

if TYPE_CHECKING:
    from anima.agent.remembering import Remembering
    from anima.runtime import Runtime

log = logging.getLogger(__name__)

STATE_URI = "anima://state"
EVENTS_URI = "anima://events"
ANIMATIONS_URI = "anima://animations"
BODY_URI = "anima://body"
ATTENTION_URI = "anima://attention"
MEMORY_URI = "anima://memory"
PERSONA_URI = "anima://persona"
MEMORIES_READ = 200  # the newest memories anima://memory holds (anima memory export: all)


@dataclass(frozen=True)
class Resource:
    uri: str
    name: str
    description: str


RESOURCES = (
    Resource(STATE_URI, "state", "The robot's state now: move, speech, gaze, estop, loop."),
    Resource(EVENTS_URI, "events", "The recent events, oldest first (moves, speech, plans)."),
    Resource(ANIMATIONS_URI, "animations", "The gestures and gaze postures the library has."),
    Resource(BODY_URI, "body", "The body: channels with their limits and roles, postures."),
    Resource(
        ATTENTION_URI,
        "attention",
        "The people the robot sees and hears (direction in degrees, facing, speaking) and "
        "whom it looks at, and why; null without a camera or a microphone array.",
    ),
    Resource(
        MEMORY_URI,
        "memory",
        "What the robot remembers of people (who, what, when, source, pinned), newest first; "
        "the person talking now. null when memory is off.",
    ),
    Resource(
        PERSONA_URI,
        "persona",
        "Who the voice agent is: name, voice, greeting, actions offered, topics, instructions.",
    ),
)


class Resources:
    """:meth:`read` a resource; :meth:`watch` for changes (its thread runs from :meth:`start`
    to :meth:`stop`); the events are recorded from the runtime's hub."""

    def __init__(
        self, runtime: Runtime, config: McpConfig, *, memory: Remembering | None = None
    ) -> None:
        self.runtime = runtime
        self.config = config
        self.memory = memory
        self._events: collections.deque[Event] = collections.deque(maxlen=config.events_kept)
        self._events_lock = threading.Lock()
        self._unsubscribe: Callable[[], None] | None = None
        self._watchers: list[Callable[[str], None]] = []
        self._stopping = threading.Event()  # set by stop(): wakes the watcher at once
        self._watch_thread: threading.Thread | None = None

    def start(self) -> None:
        self._unsubscribe = self.runtime.subscribe(self._record)
        self._stopping.clear()
        self._watch_thread = threading.Thread(target=self._watch, name="anima-mcp", daemon=True)
        self._watch_thread.start()

    def stop_watching(self) -> None:
        """Wake the watcher to end (stop's first half: the robot's executor closes meanwhile)."""
        self._stopping.set()

    def stop(self, timeout: float = 5.0) -> None:
        self._stopping.set()
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
        if self._watch_thread is not None:
            self._watch_thread.join(timeout)
            self._watch_thread = None

    def read(self, uri: str) -> str:
        """A resource's JSON text; KeyError for a URI that is none of :data:`RESOURCES`."""
        if uri == STATE_URI:
            data: JsonObject = self.runtime.state().to_json()
        elif uri == EVENTS_URI:
            with self._events_lock:
                events = list(self._events)
            data = {"events": [_event_json(e) for e in events]}
        elif uri == ANIMATIONS_URI:
            data = animations_description(self.runtime)
        elif uri == BODY_URI:
            data = body_description(self.runtime)
        elif uri == ATTENTION_URI:
            seen = self.runtime.attention
            data = {"attention": None if seen is None else seen.snapshot().to_json()}
        elif uri == MEMORY_URI:
            data = {"memory": memory_description(self.memory)}
        elif uri == PERSONA_URI:
            persona = getattr(self.runtime.agent, "persona", None)
            data = {"persona": None if persona is None else persona.as_dict()}
        else:
            raise KeyError(uri)
        return json.dumps({"v": PAYLOAD_VERSION, **data})

    def watch(self, changed: Callable[[str], None]) -> Callable[[], None]:
        """``changed(uri)`` when the state or the event log changes (at most mcp.state_hz)."""
        self._watchers.append(changed)
        return lambda: self._watchers.remove(changed) if changed in self._watchers else None

    def _record(self, event: Event) -> None:
        with self._events_lock:
            self._events.append(event)

    def _watch(self) -> None:
        period = 1.0 / self.config.state_hz
        last_state: object = None
        last_event: Event | None = None
        while not self._stopping.wait(period):  # a sleep made every stop wait up to a period
            if not self._watchers:
                continue
            state = self.runtime.state().to_json()
            key = {k: v for k, v in state.items() if k not in ("t", "loop")}
            seen = key.get("attention")
            if isinstance(seen, dict):  # its own time moves as the state's does
                key["attention"] = {k: v for k, v in seen.items() if k != "t"}
            with self._events_lock:
                newest = self._events[-1] if self._events else None
            changed = []
            if key != last_state:
                if isinstance(key.get("attention"), dict) and (
                    not isinstance(last_state, dict)
                    or last_state.get("attention") != key["attention"]
                ):
                    changed.append(ATTENTION_URI)
                last_state = key
                changed.append(STATE_URI)
            if newest is not last_event:
                last_event = newest
                changed.append(EVENTS_URI)
            for uri in changed:
                for fn in list(self._watchers):
                    try:
                        fn(uri)
                    except Exception:  # a watcher's failure is its own
                        log.exception("mcp: telling a watcher %s changed failed", uri)


def _event_json(event: Event) -> JsonObject:
    fields = event_fields(event)
    data: JsonObject = json.loads(json.dumps(fields, default=str))  # tuples → lists
    return data


def memory_description(memory: Remembering | None, limit: int = MEMORIES_READ) -> JsonObject | None:
    """The memory as the doors show it: the person talking, how many memories, the newest."""
    if memory is None:
        return None
    return {
        "person": memory.person,
        "count": memory.store.count(),
        "memories": [m.as_dict() for m in memory.store.recent(limit=limit)],
    }
