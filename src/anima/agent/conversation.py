"""The conversation loop: wake → listen → plan → say and act → feedback, interruptible.

One worker thread owns the dialogue; the listener's callbacks and wakes only hand it work.
A wake at any stage interrupts what is in flight, event-driven:

* while recording: the listener restarts the round itself;
* while the planner thinks: :meth:`Planner.interrupt` releases the request (its reply is dropped);
* while the robot speaks: the speech stops (barge-in);
* while acting: the plan is canceled — motion held, child processes killed, feedback INTERRUPTED.

While the robot speaks the listener is gated, so its own voice does not trigger the VAD.

What the robot says is bounded (:func:`~anima.agent.planners.base.speakable`: a few
sentences), and a plan that was refused is never announced with the model's words ("Sure!"):
the robot says once per turn that it could not do it and why (``refusal_speech``), and the
planner is told so it may try again.
"""

from __future__ import annotations

import dataclasses
import logging
import queue
import sys
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

from anima.agent.actions import ActionRegistry
from anima.agent.executor import Executor
from anima.agent.plan import parse_plan, refusal_speech, rejection_feedback
from anima.agent.planners.base import Planner, PlannerReply, apology, speakable
from anima.errors import AnimaError, PlanError
from anima.events import Event, Notice, SpeechEnded, SpeechStarted, Transcript, WakeDetected

if TYPE_CHECKING:
    from anima.listening.listener import Listener
    from anima.listening.sources import AudioSource
    from anima.runtime import Runtime

log = logging.getLogger(__name__)


class Conversation:
    def __init__(
        self,
        runtime: Runtime,
        registry: ActionRegistry,
        planner: Planner,
        executor: Executor,
        listener: Listener | None = None,
        *,
        feedback_rounds: int = 3,
        locale: str = "en-US",
    ) -> None:
        self.runtime = runtime
        self.registry = registry
        self.planner = planner
        self.executor = executor
        self.listener = listener
        self._rounds = feedback_rounds
        self._locale = locale
        self._requests: queue.SimpleQueue[tuple[int, str] | None] = queue.SimpleQueue()
        self._generation = 0  # bumped by every wake: work of an older generation is dropped
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._unsubscribe: list[object] = []
        self.turns = 0

    # ------------------------------------------------------------------ lifecycle
    def start(self) -> None:
        events = self.runtime.events
        self._unsubscribe = [
            events.subscribe(self._on_speech, SpeechStarted.kind, SpeechEnded.kind),
        ]
        self._thread = threading.Thread(target=self._work, name="anima-agent", daemon=True)
        self._thread.start()
        if self.listener is not None:
            self.listener.start()

    def stop(self) -> None:
        if self.listener is not None:
            self.listener.stop()
        self.planner.interrupt()
        self.executor.close()
        self._requests.put(None)
        if self._thread is not None:
            self._thread.join(3.0)
            self._thread = None
        for unsubscribe in self._unsubscribe:
            unsubscribe()  # type: ignore[operator]
        self.planner.close()

    # ------------------------------------------------------------------ inputs
    def wake(self, source: str = "manual") -> None:
        """A wake from outside the audio (keyboard, MQTT, dashboard): interrupt and listen."""
        if self.listener is not None:
            self.listener.wake(source)  # its on_wake comes back to interrupt()
        else:
            self.interrupt(WakeDetected(t=self._now(), source=source))

    def interrupt(self, event: WakeDetected) -> None:
        """Stop what is in flight: the planner's request, the robot's speech, the plan."""
        with self._lock:
            self._generation += 1
        self.planner.interrupt()
        speech = self.runtime.speech
        if speech is not None and speech.speaking:
            speech.stop_speaking()
        self.executor.cancel("interrupted")
        log.info("wake (%s): listening", event.source)

    def hear(self, transcript: Transcript) -> None:
        """A final transcript: plan and act on it (on the agent thread)."""
        if transcript.final and transcript.text.strip():
            with self._lock:
                generation = self._generation
            self._requests.put((generation, transcript.text.strip()))

    def _on_speech(self, event: Event) -> None:
        if self.listener is not None:
            self.listener.gate(isinstance(event, SpeechStarted) and self.runtime.speaking)

    # ------------------------------------------------------------------ the dialogue
    def _current(self, generation: int) -> bool:
        with self._lock:
            return generation == self._generation

    def _work(self) -> None:
        while (item := self._requests.get()) is not None:
            generation, text = item
            if not self._current(generation):
                continue
            try:
                self._turn(generation, text)
            except Exception as exc:  # one bad turn must not end the conversation
                log.exception("agent turn failed")
                self._notice(f"agent turn failed: {exc!r}")

    def _turn(self, generation: int, text: str) -> None:
        self.turns += 1
        reply = self._ask(self.planner.plan, text)
        rounds = 0
        said_refusal = False  # "Sorry, I can't do that" is said at most once per turn
        while reply is not None and self._current(generation) and not reply.interrupted:
            if not reply.actions:
                self._say(reply.response)
                return
            try:
                plan = parse_plan(self.registry, reply.actions)
            except PlanError as exc:
                # the model's words were about a plan that will not run: say that instead
                self._notice(f"plan rejected: {exc}")
                if not said_refusal:
                    said_refusal = True
                    self._say(refusal_speech(exc))
                reply = self._feedback(rejection_feedback(exc), rounds)
                rounds += 1
                continue
            self._say(reply.response)
            try:
                task = self.executor.start(plan, preempt=True)
            except AnimaError as exc:
                self._notice(f"plan not started: {exc}")
                return
            result = task.join()
            if result is None or result.interrupted or result.finished or result.feedback is None:
                return
            if not self._current(generation):
                return
            reply = self._feedback(result.feedback, rounds)
            rounds += 1

    def _feedback(self, summary: str, rounds: int) -> PlannerReply | None:
        if rounds >= self._rounds:
            return None
        return self._ask(self.planner.feedback, summary)

    def _ask(self, call: Callable[[str], PlannerReply | None], text: str) -> PlannerReply | None:
        """A planner call; a planner that raises (its bug, not its server's) is apologized
        for like a server failure, so the person hears something and the next turn works."""
        try:
            return call(text)
        except Exception as exc:
            log.exception("planner %s raised", getattr(self.planner, "name", "?"))
            reason = f"{type(exc).__name__}: {exc}"
            self._notice(f"planner failed: {reason[:200]}")
            return apology(reason[:200])

    def _say(self, text: str) -> None:
        speech = self.runtime.speech
        text = speakable(text)  # any planner's reply, bounded before it reaches the TTS
        if not text or speech is None:
            return
        try:
            speech.speak(text, self._locale)
        except AnimaError as exc:
            self._notice(f"cannot say the reply: {exc}")

    def _notice(self, message: str) -> None:
        log.warning("%s", message)
        self.runtime.events.publish(Notice(t=self._now(), source="agent", message=message))

    def _now(self) -> float:
        return self.runtime.engine.clock.now()


def build_conversation(runtime: Runtime, *, audio_in: str | None = None) -> Conversation:
    """The configured agent for ``runtime``: registry, planner, executor, and a listener on
    ``audio_in`` (``agent.audio_in``: auto | mic | none | stdin | a WAV file path)."""
    from anima.agent.planners import create_planner
    from anima.agent.vocabulary import runtime_registry

    cfg = runtime.config.agent
    if len(runtime.library) == 0:
        runtime.library.load()  # the vocabulary names the animations: built before start()
    registry = runtime_registry(runtime, user_actions=cfg.user_actions)
    planner = create_planner(
        cfg, registry, runtime.events, wake_phrase=runtime.config.listen.wake_phrase
    )
    executor = Executor.from_config(runtime, cfg, on_finish=planner.reset)
    conversation = Conversation(
        runtime,
        registry,
        planner,
        executor,
        feedback_rounds=cfg.feedback_rounds,
        locale=cfg.locale,
    )
    source = _source(audio_in if audio_in is not None else cfg.audio_in)
    if source is not None:
        from anima.listening.listener import Listener

        listen = runtime.config.listen
        if cfg.planner != "rules":
            listen = dataclasses.replace(listen, asr_mode="lm")  # open vocabulary for an LLM
        conversation.listener = Listener(
            source,
            config=listen,
            phrases=registry.grammar_phrases(),
            hub=runtime.events,
            on_wake=conversation.interrupt,
            on_final=conversation.hear,
        )
    return conversation


def _source(audio_in: str) -> AudioSource | None:
    from anima.listening.sources import MicrophoneSource, RawPcmSource, WavSource

    if audio_in == "none":
        return None
    if audio_in == "stdin":
        return RawPcmSource(sys.stdin.buffer)
    if audio_in == "mic":
        return MicrophoneSource()
    if audio_in == "auto":
        return MicrophoneSource() if _has_microphone() else None
    return WavSource(audio_in, realtime=True)


def _has_microphone() -> bool:
    try:
        import sounddevice as sd

        return sd.query_devices(kind="input") is not None
    except Exception:  # no PortAudio or no input device
        return False
