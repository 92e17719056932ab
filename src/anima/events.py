"""The event hub: how the runtime tells the world what happened.

Producers (the motion engine's tick among them) call :meth:`EventHub.publish`, which only
enqueues and never blocks. A dispatcher thread owned by the hub delivers events to
subscribers, so a slow subscriber can never stall the 100 Hz loop. Delivery is therefore
asynchronous: :meth:`EventHub.flush` waits until what was published has been delivered (the
runtime's shutdown, so the last ``end_speak`` reaches the front doors before they close).
"""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import ClassVar, Literal, Protocol

log = logging.getLogger(__name__)


@dataclass(frozen=True, kw_only=True)
class Event:
    """Base of all events; ``kind`` is the stable name front doors publish it under."""

    kind: ClassVar[str] = "event"
    t: float = 0.0  # engine clock seconds when it happened (0 when not tied to a tick)


@dataclass(frozen=True, kw_only=True)
class MoveStarted(Event):
    kind: ClassVar[str] = "move_started"
    name: str
    duration: float


@dataclass(frozen=True, kw_only=True)
class MoveFinished(Event):
    kind: ClassVar[str] = "move_finished"
    name: str
    cut: bool  # False: it ran to its end; True: cleared, preempted or estopped
    reason: str = ""  # why it was cut


@dataclass(frozen=True, kw_only=True)
class EngineFault(Event):
    """Something the engine refused or survived (a bad override source, a driver error…)."""

    kind: ClassVar[str] = "engine_fault"
    source: str
    reason: str


@dataclass(frozen=True, kw_only=True)
class EStopChanged(Event):
    kind: ClassVar[str] = "estop"
    active: bool


@dataclass(frozen=True, kw_only=True)
class CommandRejected(Event):
    """A command was refused; ``reason`` says exactly why (front doors report it to the sender)."""

    kind: ClassVar[str] = "command_rejected"
    command: str  # what was asked: a command name, an MQTT topic, a REST path
    argument: str = ""  # an excerpt of what it was asked with
    reason: str
    source: str = ""  # which front door: "mqtt", "rest", "console", …


@dataclass(frozen=True, kw_only=True)
class Notice(Event):
    """Something worth telling that is not an error (a gaze point clamped, a file reloaded…)."""

    kind: ClassVar[str] = "notice"
    source: str
    message: str


@dataclass(frozen=True, kw_only=True)
class SpeechStarted(Event):
    """An utterance's audio starts (``start_speak``): after the previous one's end; one that
    never sounded (dropped by a stop, failed) gets it just before its SpeechEnded."""

    kind: ClassVar[str] = "start_speak"
    utterance: str  # id pairing it with its SpeechEnded
    text: str
    locale: str


# Why an utterance ended: its audio played out (done), a wake or stop_speak cut it (stopped),
# the person talked over it (interrupted: a full-duplex barge-in), an emergency stop (estop), the
# runtime stopping (shutdown), or a failure (error).
SpeechEndReason = Literal["done", "stopped", "interrupted", "estop", "shutdown", "error"]


@dataclass(frozen=True, kw_only=True)
class SpeechEnded(Event):
    """An utterance ended: its audio finished, or it was stopped or failed (``end_speak``)."""

    kind: ClassVar[str] = "end_speak"
    utterance: str
    reason: SpeechEndReason = "done"


# The conversation's phase (anima.agent.presence): what a person can read from the robot.
ConversationPhase = Literal[
    "idle", "engaged", "listening", "thinking", "speaking", "interrupted", "sleeping"
]


@dataclass(frozen=True, kw_only=True)
class ConversationChanged(Event):
    """The conversation went into another phase (``previous`` → ``state``; ``reason`` says
    what moved it: a wake, a final, the robot speaking, a barge-in, a time out…)."""

    kind: ClassVar[str] = "conversation"
    state: ConversationPhase
    previous: ConversationPhase
    reason: str = ""


@dataclass(frozen=True, kw_only=True)
class AttentionChanged(Event):
    """Social attention chose another target (docs/attention.md): a person (``person``: their
    id), a voice with no face seen, an idle glance, a commanded gaze that holds the head, or
    none; ``azimuth_deg``/``elevation_deg``: where it aims (robot frame, degrees; None when it
    lets the gaze go); ``reason`` in a few words ("speaking", "nearest face", "look_at" …)."""

    kind: ClassVar[str] = "attention"
    target: str  # person | voice | idle | commanded | none
    person: int | None = None
    azimuth_deg: float | None = None
    elevation_deg: float | None = None
    reason: str = ""


@dataclass(frozen=True, kw_only=True)
class WakeDetected(Event):
    """The listener woke: the wake phrase was heard, or a key/MQTT message asked it to."""

    kind: ClassVar[str] = "wake"
    source: str  # keyphrase | manual (a key, a button, an MQTT message) | …
    phrase: str = ""  # the wake phrase heard (empty for a manual wake)


@dataclass(frozen=True, kw_only=True)
class Transcript(Event):
    """What the listener heard: partial results while the person speaks, then one final."""

    kind: ClassVar[str] = "asr"
    text: str
    final: bool  # False: a partial that may still change; True: the utterance's result
    # how sure the recognizer is of a final (0-1; None: the engine gives no confidence); below
    # listen.min_confidence the agent asks again instead of acting on a guess
    confidence: float | None = None
    # a final's other readings, best first (Whisper's beam: docs/listening.md, *Other
    # readings*); the agent turns to them when it cannot read ``text``
    alternatives: tuple[str, ...] = ()
    # a final's voiced audio in seconds (the VAD's voiced frames; None: not measured): a voice
    # heard over the robot this short is a backchannel unless it says stop (agent/barge_in.py)
    voiced_s: float | None = None


@dataclass(frozen=True, kw_only=True)
class ListenTimeout(Event):
    """A listening round ended without a usable transcript."""

    kind: ClassVar[str] = "listen_timeout"
    reason: str  # no_speech | silence | too_short | source_ended
    waited_s: float = 0.0  # audio seconds from the wake to giving up
    text: str = ""  # what was heard, when it was discarded as too short


class StepStatus(StrEnum):
    """Where one step of a plan is (``action_status``'s ``status``)."""

    RUNNING = "running"
    SUCCEEDED = "succeeded"  # True or (True, message)
    SELF_FEEDBACK = "self_feedback"  # None: done, nothing to report
    FAILED = "failed"  # (False, message), False, an exception, an unexpected value
    CANCELED = "canceled"  # interrupted, or not run (interrupt, failure, finish)


class PlanOutcome(StrEnum):
    """How a plan ended (``plan_finished``'s ``outcome``)."""

    SUCCEEDED = "succeeded"  # every step succeeded
    FAILED = "failed"  # a step failed (the rest canceled when stop_on_failure)
    INTERRUPTED = "interrupted"  # canceled: a wake, a stop, a new request
    FINISHED = "finished"  # finish(): the task is over


@dataclass(frozen=True, kw_only=True)
class PlanStarted(Event):
    """The agent's executor began a validated plan (``…/agent/plan``)."""

    kind: ClassVar[str] = "plan_started"
    plan: str  # id pairing it with its ActionStatus and PlanFinished events
    steps: tuple[str, ...]  # the action strings, in order
    source: str = "agent"  # who asked: a planner name, "console", …


@dataclass(frozen=True, kw_only=True)
class ActionStatus(Event):
    """One step of an agent plan changed state (``…/agent/action_status``)."""

    kind: ClassVar[str] = "action_status"
    plan: str
    index: int  # 0-based position of the step in the plan
    action: str  # the action's registered name
    step: str  # the action string as run, e.g. play_animation(name='nod')
    status: StepStatus
    message: str = ""  # the action's result message, the error, or why it was canceled


@dataclass(frozen=True, kw_only=True)
class PlanFinished(Event):
    """An agent plan ended; ``feedback`` is the summary returned to the planner."""

    kind: ClassVar[str] = "plan_finished"
    plan: str
    outcome: PlanOutcome
    feedback: str = ""  # "Robot feedback: …" (empty when there is nothing to report)


Handler = Callable[[Event], None]


class Publisher(Protocol):
    """Where a part publishes its events: the hub, or the agent's port to the robot."""

    def publish(self, event: Event) -> None: ...


class _Flush:
    """A marker in the hub's queue: set once every event published before it was delivered."""

    def __init__(self) -> None:
        self.done = threading.Event()


@dataclass
class _Subscription:
    handler: Handler
    kinds: frozenset[str] | None = field(default=None)


class EventHub:
    """Publish/subscribe with asynchronous delivery on one dispatcher thread."""

    def __init__(self) -> None:
        self._subs: list[_Subscription] = []
        self._lock = threading.Lock()
        self._queue: queue.SimpleQueue[Event | _Flush | None] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None

    def subscribe(self, handler: Handler, *kinds: str) -> Callable[[], None]:
        """Call ``handler`` for events of ``kinds`` (all when none given); returns unsubscribe."""
        sub = _Subscription(handler, frozenset(kinds) if kinds else None)
        with self._lock:
            self._subs.append(sub)

        def unsubscribe() -> None:
            with self._lock:
                if sub in self._subs:
                    self._subs.remove(sub)

        return unsubscribe

    def publish(self, event: Event) -> None:
        """Enqueue ``event``; never blocks."""
        self._queue.put(event)

    def start(self) -> None:
        if self._thread is not None:
            return
        self._thread = threading.Thread(target=self._run, name="anima-events", daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 1.0) -> None:
        if self._thread is None:
            return
        self._queue.put(None)
        self._thread.join(timeout)
        self._thread = None

    def flush(self, timeout: float = 1.0) -> bool:
        """Block until every event published before this call has been delivered (True), or
        ``timeout`` seconds pass (False: a subscriber is slow). Delivers them here when no
        dispatcher runs; called from a subscriber (the dispatcher itself) it cannot wait: False.
        """
        thread = self._thread
        if thread is None:
            self.drain()
            return True
        if thread is threading.current_thread():
            return False
        marker = _Flush()
        self._queue.put(marker)
        return marker.done.wait(timeout)

    def drain(self) -> int:
        """Deliver everything queued, on the calling thread (for tests and single-threaded use)."""
        n = 0
        while True:
            try:
                event = self._queue.get_nowait()
            except queue.Empty:
                return n
            if isinstance(event, _Flush):
                event.done.set()
            elif event is not None:
                self._deliver(event)
                n += 1

    def _run(self) -> None:
        while True:
            event = self._queue.get()
            if event is None:
                return
            if isinstance(event, _Flush):
                event.done.set()
            else:
                self._deliver(event)

    def _deliver(self, event: Event) -> None:
        with self._lock:
            subs = list(self._subs)
        for sub in subs:
            if sub.kinds is None or event.kind in sub.kinds:
                try:
                    sub.handler(event)
                except Exception:
                    log.exception("event handler %r failed on %s", sub.handler, event.kind)
