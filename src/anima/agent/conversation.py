"""The conversation loop: wake → listen → plan → say and act → feedback, interruptible.

One worker thread owns the dialogue; what the listener sends up (:meth:`Conversation.take`,
its one consumer) and wakes only hand it work.
A wake at any stage interrupts what is in flight, event-driven:

* while recording: the listener restarts the round itself;
* while the planner thinks: :meth:`Planner.interrupt` releases the request (its reply is dropped);
* while the robot speaks: the speech stops (barge-in);
* while acting: the plan is canceled — motion held, child processes killed, feedback INTERRUPTED.

While the robot speaks the listener is gated, so its own voice does not trigger the VAD; in full
duplex (``listen.duplex``) it listens on, and a voice over the robot is a barge-in
(:mod:`~anima.agent.barge_in`).

A final transcript whose confidence is under ``listen.min_confidence`` is answered "Sorry, I
didn't catch that." and not planned: the only "not caught" (a typed ``ask`` has no
confidence, and words heard well but not understood are told so, with what the robot can do).
What any other request becomes — read, planned, said and acted on, its feedback told, each
refusal and failure said once per turn — is
:mod:`~anima.agent.dialogue`'s, run on the worker thread; everything a turn says goes through
the conversation, checked under the lock a wake takes.

The replies the robot gives without a planner's say — "Sorry, I didn't catch that.", and what
the rule planner answers to each kind of question about itself (its name, what it can do, which
also ends every refusal) — are synthesized at start-up (:meth:`SpeechService.prepare`), so they
play without waiting for the voice.

What a wake or a voice over the robot stops, and the glance that acknowledges a wake, are
:mod:`~anima.agent.interruption`'s.

**The early reply** (full duplex, ``listen.turn_early_s``): at a pause that may end the turn
the turn is planned and its words begin; the final confirms it, the person going on takes it
back (:mod:`~anima.agent.early`).
"""

from __future__ import annotations

import collections
import logging
import queue
import threading
from typing import TYPE_CHECKING

from anima.agent.actions import ActionRegistry
from anima.agent.barge_in import BargeIn, recognizer_reading
from anima.agent.dialogue import Dialogue, PlannerCall
from anima.agent.early import EarlyReplies, EarlyReply
from anima.agent.executor import Executor
from anima.agent.interruption import Interruptions
from anima.agent.latency import TurnTiming
from anima.agent.planners.base import Planner, Retracts, speakable
from anima.agent.presence import Presence
from anima.agent.reply import canned, say_reply
from anima.agent.summary import Spoken, summarise_later
from anima.agent.understanding import About
from anima.config import AgentConfig, ListenConfig
from anima.errors import AnimaError
from anima.events import (
    ConversationChanged,
    ConversationPhase,
    Event,
    ListenTimeout,
    Notice,
    PlanFinished,
    PlanStarted,
    SpeechEnded,
    SpeechStarted,
    Transcript,
    WakeDetected,
)  # fmt: skip
from anima.listening.results import EarlyTranscript, TurnResumed
from anima.logtext import quoted

if TYPE_CHECKING:
    from anima.agent.persona import Persona
    from anima.agent.port import RobotPort
    from anima.agent.remembering import Remembering
    from anima.listening.listener import Listener
    from anima.listening.results import ListenResult

# PlannerCall is anima.agent.dialogue's now, still importable from here
__all__ = ["NOT_CAUGHT", "TIMINGS", "Conversation", "PlannerCall"]

log = logging.getLogger(__name__)


def _log_plan(event: Event) -> None:
    """What the robot planned and how it went, at INFO (a planner's words escaped)."""
    if isinstance(event, PlanStarted):
        log.info("plan (%s): %s", event.source, quoted("; ".join(event.steps)))
    elif isinstance(event, PlanFinished):
        said = f": {quoted(event.feedback)}" if event.feedback else ""
        log.info("plan %s%s", event.outcome, said)


NOT_CAUGHT = "Sorry, I didn't catch that."  # said for a transcript under min_confidence
TIMINGS = 64  # turns whose timing is kept (the bench reads the last few)


# a heard request: (generation, text, its other readings, heard well enough to act on, its
# time, the early reply it begins or None)
_Request = tuple[int, str, tuple[str, ...], bool, float, EarlyReply | None]


class Conversation:
    def __init__(
        self,
        robot: RobotPort,
        registry: ActionRegistry,
        planner: Planner,
        executor: Executor,
        listener: Listener | None = None,
        *,
        feedback_rounds: int = 3,
        locale: str = "en-US",
        min_confidence: float | None = None,
        acknowledge_wake: bool = True,
        listen: ListenConfig | None = None,
        agent: AgentConfig | None = None,
    ) -> None:
        """``listen``/``agent``: the config sections it follows (their defaults when None);
        ``min_confidence``: None reads ``listen.min_confidence``."""
        self.robot = robot
        listen = listen or ListenConfig()
        agent = agent or AgentConfig()
        self.registry = registry
        self.planner = planner
        self.executor = executor
        self.listener = listener
        self.memory: Remembering | None = None  # what it remembers (build_conversation's)
        self.persona: Persona | None = None  # who it is (build_conversation's)
        self.summarise = agent.memory.summarise  # condense each conversation into memories
        self.spoken = Spoken()  # what was said since the conversation began
        self._locale = locale
        if min_confidence is None:
            min_confidence = listen.min_confidence
        self.min_confidence = min_confidence
        self.duplex = listen.duplex
        # over the robot, words are taken at barge_in_confidence (never below min_confidence)
        barge_sure = max(min_confidence, listen.barge_in_confidence)
        barge = BargeIn(sustain_s=listen.barge_in_s,
                        min_confidence=barge_sure,
                        second_reading=recognizer_reading(lambda: self.listener))  # fmt: skip
        self.presence = Presence(
            robot.publish, robot.clock, robot.call_later,
            engaged_s=agent.engaged_s, sleep_after_s=agent.sleep_after_s,
        )  # fmt: skip
        self.interruptions = Interruptions(
            robot, planner, executor, bump=self._bump, listener=lambda: self.listener,
            barge=barge, presence=self.presence, acknowledge_wake=acknowledge_wake,
        )  # fmt: skip
        # (generation, text, its other readings, heard well enough to act on, its time)
        self._requests: queue.SimpleQueue[_Request | None] = queue.SimpleQueue()
        self._generation = 0  # bumped by every wake: work of an older generation is dropped
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._unsubscribe: list[object] = []
        self._stopped = False
        self.turns = 0
        # the reply begun at a pause, until confirmed or taken back
        self.early_reply = EarlyReplies(
            spoken=self.spoken, current=self._current, take_back=self._take_back
        )
        # when each recent turn was heard and planned (anima bench conversation's stages)
        self.timings: collections.deque[TurnTiming] = collections.deque(maxlen=TIMINGS)
        self._dialogue = Dialogue(
            registry, planner, executor,
            about=About(name=agent.name, wake_phrase=listen.wake_phrase),
            listener=lambda: self.listener, say=self._say, current=self._current,
            notice=self._notice, now=self._now, timings=self.timings,
            feedback_rounds=feedback_rounds,
        )  # fmt: skip

    # ------------------------------------------------------------------ lifecycle
    def prepare(self) -> None:
        """Before the runtime's loop runs: the understanding compiled, the listener's models
        loaded (Whisper, Silero, the spotter hold the GIL while they load)."""
        self._dialogue.understand()
        if self.listener is not None:
            self.listener.prepare()

    def start(self) -> None:
        self._unsubscribe = [
            self.robot.subscribe(self._on_speech, SpeechStarted.kind, SpeechEnded.kind),
            self.robot.subscribe(_log_plan, PlanStarted.kind, PlanFinished.kind),
            self.robot.subscribe(self._on_phase, ConversationChanged.kind),
        ]
        self._dialogue.understand()  # compiled now, not at the first request
        self._thread = threading.Thread(target=self._work, name="anima-agent", daemon=True)
        self._thread.start()
        self.robot.prepare_speech(self.canned(), self._locale)
        if self.listener is not None:
            self.listener.start()

    def stop(self, timeout: float = 5.0) -> None:
        """Stop listening, planning and acting, within about ``timeout`` s; a second call does
        nothing (the runtime stops the agent it has, and a test may have stopped it first)."""
        if self._stopped:
            return
        self._stopped = True
        if self.listener is not None:
            self.listener.stop()
        self.early_reply.settle(None)
        self.planner.interrupt()
        self.executor.close()
        self._requests.put(None)
        if self._thread is not None:
            self._thread.join(3.0)
            self._thread = None
        for unsubscribe in self._unsubscribe:
            unsubscribe()  # type: ignore[operator]
        self.planner.close()
        self.presence.close()
        if self.memory is not None:
            self.memory.store.close()

    @property
    def early_replies(self) -> int:
        """Replies begun early, at a pause (full duplex)."""
        return self.early_reply.begun

    @property
    def taken_back(self) -> int:
        """Of the replies begun early, those taken back."""
        return self.early_reply.taken_back

    @property
    def phase(self) -> ConversationPhase:
        """Where the conversation is (idle, listening, thinking, …): the presence's state."""
        return self.presence.state

    def canned(self) -> list[str]:
        """What the robot says often in the same words (:func:`~anima.agent.reply.canned`)."""
        return canned(self.planner, NOT_CAUGHT)

    # ------------------------------------------------------------------ inputs
    def take(self, result: ListenResult) -> None:
        """What the listener sends up, in order (the conversation is its one consumer): a wake
        interrupts, a partial may stop the robot, a final is planned, a round that heard
        nothing ends the listening. Each result that is an event (wake, asr, listen_timeout,
        notice) is then published for the outside world, even when handling it failed."""
        try:
            match result:
                case WakeDetected():
                    self.interrupt(result)
                case Transcript(final=True):
                    self.hear(result)
                case Transcript():
                    self.partial(result)
                case EarlyTranscript():
                    self.early(result)
                case TurnResumed():
                    self.resumed()
                case ListenTimeout():
                    self.gave_up(result)
        finally:
            if isinstance(result, Event):
                self.robot.publish(result)

    def wake(self, source: str = "manual") -> None:
        """A wake from outside the audio (keyboard, MQTT, dashboard): interrupt and listen."""
        if self.listener is not None:
            self.listener.wake(source)  # its wake comes back through take() to interrupt()
        else:
            self.interrupt(WakeDetected(t=self._now(), source=source))

    def interrupt(self, event: WakeDetected) -> None:
        """A wake: stop what is in flight and glance at the person; a barge-in (a voice over the
        robot, full duplex) only opens a candidate (:mod:`~anima.agent.interruption`)."""
        if event.source != "barge_in":
            self.early_reply.settle(None, "a wake")
        self.interruptions.wake(event)

    def early(self, transcript: EarlyTranscript) -> None:
        """Full duplex: a pause that may end the turn. Begin the reply now (module docstring),
        unless the robot is talking (a voice over it is a barge-in's to judge); words heard
        with too little confidence begin "Sorry, I didn't catch that." as their final would."""
        text = transcript.text.strip()
        if not text or self.robot.speaking or self.executor.busy:
            return
        caught = self._caught(transcript.confidence)
        with self._lock:
            generation = self._generation
        early = self.early_reply.begin(generation, text, caught=caught)
        self.presence.to("thinking", f"heard {text[:40]!r} (the turn may be over)")
        others = tuple(transcript.alternatives)
        item = (early.generation, text, others, caught, transcript.t, early)
        self._requests.put(item)

    def resumed(self) -> None:
        """The person went on after the pause: the reply begun there is taken back."""
        if self.early_reply.settle(None, "the person went on") == "taken back":
            self.presence.to("listening", "the person goes on")

    def _take_back(self) -> None:
        """An early reply taken back: its words stop, its plan never starts, the planner
        forgets the request."""
        self.interruptions.halt("interrupted")
        if isinstance(self.planner, Retracts):
            self.planner.retract()

    def partial(self, transcript: Transcript) -> None:
        """A partial transcript: a stop word over the robot stops it at once."""
        self.interruptions.partial(transcript.text)

    def gave_up(self, timeout: ListenTimeout) -> None:
        """A round that ended without words: a sound over the robot (a cough) lets it go on."""
        self.early_reply.settle(None, f"the round gave up ({timeout.reason})")
        self.interruptions.gave_up(timeout.reason)
        self.presence.to("engaged", f"nothing heard ({timeout.reason})", when=("listening",))

    def _bump(self) -> None:
        with self._lock:
            self._generation += 1

    def hear(self, transcript: Transcript) -> None:
        """A final transcript: plan and act on it (on the agent thread); one heard with too
        little confidence is answered "Sorry, I didn't catch that." instead. Heard over the
        robot (full duplex), a backchannel lets it go on and anything else stops it first."""
        caught = self._caught(transcript.confidence)
        early = self.early_reply
        if early.pending and early.settle(transcript.text, caught=caught) == "confirmed":
            self._not_caught(transcript, caught)  # its words were kept when the reply began
            return
        if self.interruptions.over_the_robot(transcript):
            return
        if transcript.final and transcript.text.strip():
            self.spoken.heard(transcript.text)
            with self._lock:
                generation = self._generation
            self._not_caught(transcript, caught)
            others = tuple(transcript.alternatives)
            self.presence.to("thinking", f"heard {transcript.text.strip()[:40]!r}")
            item = (generation, transcript.text.strip(), others, caught, transcript.t, None)
            self._requests.put(item)

    def _caught(self, confidence: float | None) -> bool:
        return confidence is None or confidence >= self.min_confidence

    def _not_caught(self, transcript: Transcript, caught: bool) -> None:
        if not caught:
            self._notice(
                f"not acted on: heard {transcript.text.strip()[:60]!r} with confidence "
                f"{transcript.confidence:.2f} < listen.min_confidence {self.min_confidence:g}"
            )

    def _on_phase(self, event: Event) -> None:
        # the conversation is over (nobody spoke for agent.engaged_s): whoever talks next says
        # who they are again (anima recognises nobody: docs/memory.md)
        if not (isinstance(event, ConversationChanged) and event.state == "idle"):
            return
        lines = self.spoken.take()
        summarise = getattr(self.planner, "summarise", None)
        if self.memory is not None:
            if self.summarise and callable(summarise):
                summarise_later(lines, summarise, self.memory, self._notice)
            self.memory.reset()

    def _on_speech(self, event: Event) -> None:
        # A start gates (its audio starts now; its end follows in order). A streamed reply is
        # several utterances: the end of one with the next waiting keeps the gate; the end of
        # the last opens it.
        if isinstance(event, SpeechStarted):
            self.spoken.said(event.text)
        talking = isinstance(event, SpeechStarted) or self.robot.speaking
        if talking:
            self.presence.to("speaking", "the robot speaks")
        else:
            self.presence.to("engaged", "the robot finished speaking", when=("speaking",))
        if self.listener is not None:
            if self.duplex:
                self.listener.speaking(talking)
            else:
                self.listener.gate(talking)

    # ------------------------------------------------------------------ the worker
    def _current(self, generation: int) -> bool:
        with self._lock:
            return generation == self._generation

    def _work(self) -> None:
        while (item := self._requests.get()) is not None:
            generation, text, others, caught, heard_t, early = item
            if not self._current(generation):
                continue
            try:
                if caught:
                    chosen = self._dialogue.reading(text, others)
                    self.turns += 1
                    hold = early.wait if early is not None else None
                    self._dialogue.turn(generation, chosen, heard_t, hold=hold)
                else:
                    self.turns += 1
                    self.timings.append(TurnTiming(heard_t=heard_t, planned_t=self._now()))
                    self._say(generation, NOT_CAUGHT)
            except Exception as exc:  # one bad turn must not end the conversation
                log.exception("agent turn failed")
                self._notice(f"agent turn failed: {exc!r}")
            self.presence.to("engaged", "the turn is over", when=("thinking",))

    def _say(self, generation: int, text: str) -> bool:
        """Say ``text`` if the turn is still current (checked under the lock a wake takes, so
        a wake either comes first and nothing is said, or comes after and stops it)."""
        text = speakable(text)  # any planner's reply, bounded before it reaches the TTS
        if not text:
            return False
        with self._lock:
            if generation != self._generation:
                return False
            try:
                say_reply(self.robot.execute, text, self._locale, self._notice)
            except AnimaError as exc:
                self._notice(f"cannot say the reply: {exc}")
                return False
        return True

    def _notice(self, message: str) -> None:
        log.warning("%s", message)
        self.robot.publish(Notice(t=self._now(), source="agent", message=message))

    def _now(self) -> float:
        return self.robot.clock.now()
