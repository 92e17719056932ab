"""The speech service: one utterance at a time, lips and sway on the playback clock.

``speak()`` accepts a request (its id at once); a worker synthesizes it and feeds the sink
(:mod:`anima.speech.synthesis`); a player thread follows the sink's playback clock
(:mod:`anima.speech.player`) and sets the head sway every 50 ms hop. ``start_speak`` goes out
when the utterance's first audio goes to the sink (after the previous utterance's
``end_speak``), ``end_speak`` when its last sample has played. The lips are an override read by
the motion engine every tick at the sink's playback position. Every
``start_speak`` gets exactly one ``end_speak`` (reason ``done``, ``stopped``, ``estop``,
``shutdown`` or ``error``): a stop ends the current and the waiting utterances at once, and
each utterance's end is published once whoever ends it first (the stop or the worker). One
that never sounded (dropped from the queue by a stop, or failed before its audio) gets its
``start_speak`` and ``end_speak`` together, so the events stay paired and in order:
start₁ end₁ start₂ end₂ …, each with the utterance's id.

:meth:`SpeechService.prepare` hands the worker texts to synthesize ahead of time, when nothing
waits to be said, into an engine's cache (an engine with a ``prepare(text, locale)``: Piper's
:class:`~anima.speech.cache.ClauseCache`); nothing is played or published for them.

The silence an engine puts before an utterance's first sound is dropped (all but
:data:`~anima.speech.utterance.LEAD_KEEP_S`; every mark moves with it), so the voice starts as
soon as it can.

:meth:`SpeechService.open_stream` queues a voice stream (a realtime model's voice): an utterance
whose audio is fed as it comes, played by the worker as it arrives (:mod:`anima.speech.stream`).

``say()`` (and ``speak()``, which makes the :class:`~anima.commands.Speak` it says) is the one
way text reaches an engine: every text comes as a command that checked itself as it was made (at
most :data:`~anima.language.text.MAX_SPEECH_TEXT` characters, no control character, its markup read
once), and nothing is accepted while the emergency stop is on.
"""

from __future__ import annotations

import collections
import itertools
import logging
import threading
import uuid
from collections.abc import Callable, Sequence

from anima.clock import Clock
from anima.commands import OpenVoiceStream, Speak, VoiceStream
from anima.errors import (
    CommandRefusedError,
    EStopActiveError,
    SpeechError,
)
from anima.events import (
    AttentionChanged,
    ConversationChanged,
    Event,
    EventHub,
    Notice,
    SpeechEnded,
    SpeechEndReason,
    SpeechStarted,
    WakeDetected,
)
from anima.language.markup import Mode, Script, Segment
from anima.language.text import MAX_SPEECH_TEXT
from anima.logtext import quoted
from anima.motion.engine import MotionEngine
from anima.speech.base import AudioSink, TTSEngine
from anima.speech.cues import CuePlayer
from anima.speech.gestures import Gestures
from anima.speech.player import LIPS, SWAY, Player
from anima.speech.stream import Stream
from anima.speech.synthesis import Synthesis, engine_for, load_engines, prepare
from anima.speech.utterance import Utterance

log = logging.getLogger(__name__)

__all__ = ["CUES", "LIPS", "LOAD_WAIT_S", "MAX_PREPARED", "SWAY", "SpeechService"]

CUES = "speech-cues"  # the motion tick hook that fires annotated speech's cues
# stop() waits this long for engines still loading: a thread left inside Piper's onnxruntime
# or eSpeak when the interpreter exits aborts the process ("terminate called without an active
# exception", exit -6) — seen when a signal came while a loaded machine took > 2 s to load Piper
LOAD_WAIT_S = 30.0
MAX_PREPARED = 64  # texts waiting to be prepared (more are dropped: the cache is bounded anyway)


class SpeechService:
    def __init__(
        self,
        engines: Sequence[TTSEngine],
        sink: AudioSink,
        motion: MotionEngine,
        events: EventHub,
        clock: Clock,
        *,
        before_speaking: Callable[[], None] | None = None,
        max_queue: int = 20,
        gestures: Gestures | None = None,
        gesture_mode: Mode = "contextual",
        antennas_span: float = 25.0,
    ) -> None:
        if not engines:
            raise SpeechError("no TTS engine available")
        self.engines = list(engines)
        self.sink = sink
        self._motion = motion
        self._events = events
        self._unsubscribe: Callable[[], None] | None = None  # the warm-up's subscription
        self._clock = clock
        self._before = before_speaking
        self._max_queue = max_queue
        self.cues = CuePlayer(motion, events, clock, gestures, gesture_mode)
        self._cond = threading.Condition()  # re-entrant: the player stops speech holding it
        self._player = Player(
            self._cond, clock, sink, motion, self.cues,
            antennas_span=antennas_span, started=self._start,
        )  # fmt: skip
        self._synthesis = Synthesis(sink, self._player, self.cues, self._made)
        self._queue: collections.deque[Utterance] = collections.deque()
        self._preparing: collections.deque[tuple[str, str]] = collections.deque(
            maxlen=MAX_PREPARED
        )  # (text, locale) to synthesize into a cache when idle
        self._current: Utterance | None = None
        self._running = False
        self._making = False  # the worker is making an utterance's audio (not waiting on it)
        self._threads: list[threading.Thread] = []
        self._ids = itertools.count(1)
        self._loaded = threading.Event()  # set once load_engines has returned
        motion.set_tick_hook(CUES, self._player.cue_tick)

    # ------------------------------------------------------------------ lifecycle
    def start(self) -> None:
        with self._cond:
            if self._running:
                return
            self._running = True
        for target, name in ((self._work, "anima-speech"), (self._play, "anima-speech-player")):
            th = threading.Thread(target=target, name=name, daemon=True)
            th.start()
            self._threads.append(th)
        self._unsubscribe = self._events.subscribe(
            self._someone_there, ConversationChanged.kind, WakeDetected.kind, AttentionChanged.kind
        )

    def _someone_there(self, event: Event) -> None:
        """Someone may soon be spoken to (a wake, the conversation engaged or listening, a
        person or a voice attended to): an engine whose voice left memory while idle (Piper's
        worker, ``speech.piper_idle_exit_s``) starts it again now, not at the first sentence."""
        if isinstance(event, ConversationChanged) and event.state not in ("engaged", "listening"):
            return
        if isinstance(event, AttentionChanged) and event.target not in ("person", "voice"):
            return
        for engine in self.engines:
            warm = getattr(engine, "warm", None)
            if callable(warm):
                warm()

    def stop(self, reason: SpeechEndReason = "shutdown") -> None:
        """End every utterance now (``end_speak`` with ``reason``), then stop the threads."""
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
        with self._cond:
            # first, so a speak() racing this is refused rather than queued for no worker
            self._running = False
            self._cond.notify_all()
        self.stop_speaking(reason)
        # an engine whose voice still loads in its own process (Piper's worker, on a busy
        # machine) is ended now: the speech thread waiting for that load returns at once
        self._close_engines()
        if self._threads and not self._loaded.wait(LOAD_WAIT_S):
            log.warning("speech: the engines still load after %.0f s; stopping anyway", LOAD_WAIT_S)
        for th in self._threads:
            th.join(2.0)
        self._threads = []
        self.sink.close()
        self._close_engines()  # again: one the speech thread started meanwhile

    def _close_engines(self) -> None:
        from anima.speech import close_engines

        close_engines(self.engines)  # an engine with a process of its own (Piper) ends it

    @property
    def speaking(self) -> bool:
        """An utterance plays or waits (one whose end_speak went out no longer counts, though
        the worker may still be leaving it)."""
        current = self._current
        return (current is not None and not current.ended) or bool(self._queue)

    @property
    def synthesizing(self) -> bool:
        """The worker has audio to make now: an utterance was accepted and its synthesis has
        not reached the sink yet (one waiting for the current to finish playing does not
        count). A fake-time test waits for this to end before it moves the clock, so audio
        is made in no time."""
        with self._cond:
            return self._making or (self._current is None and bool(self._queue))

    # ------------------------------------------------------------------ requests (any thread)
    def speak(self, text: str, locale: str = "en-US") -> str:
        """Accept an utterance; returns its id (:meth:`say` of ``Speak(text, locale)``)."""
        return self.say(Speak(text=text, locale=locale))

    def say(self, command: Speak) -> str:
        """Accept an utterance; returns its id (its ``start_speak`` comes when its audio
        starts, after the utterances before it have ended).

        The text may carry gestures (:mod:`anima.language.markup`): ``start_speak`` shows it
        without them. The command checked its text as it was made (empty, over
        ``MAX_SPEECH_TEXT`` characters, a control character or a lone surrogate, a malformed
        marker) and read its markup; refused here: a marker naming an animation the library
        lacks, a full queue, and anything while the emergency stop is on (until it is reset).
        """
        script = self.cues.named(command.script)  # read once, by the command: not parsed again
        with self._cond:
            u = Utterance(id=self._accept("speak"), text=script.text, locale=command.locale,
                          script=script)  # fmt: skip
            self._queue.append(u)
            self._cond.notify_all()
        return u.id

    def open_stream(self, command: OpenVoiceStream) -> VoiceStream:
        """Accept a voice stream (:mod:`anima.speech.stream`): an utterance whose audio the
        caller feeds as it comes, queued as :meth:`say` queues one and refused as it refuses
        one (the emergency stop, a full queue)."""
        with self._cond:
            u = Utterance(id=self._accept("voice stream"), text="", locale=command.locale,
                          script=Script("", (Segment(""),)))  # fmt: skip
            stream = Stream(
                u, cond=self._cond, clock=self._clock, sink=self.sink, player=self._player,
                cues=self.cues, events=self._events, made=self._made, stop=self.end_utterance,
            )  # fmt: skip
            self._queue.append(u)
            self._cond.notify_all()
        log.info("voice stream %s opened for %s", u.id, command.source)
        return stream

    def _accept(self, what: str) -> str:
        """A new utterance's id, or the refusal of ``what`` (the lock held: a request racing
        an estop is either refused here or queued before the estop's stop_speaking() ends it)."""
        if self._motion.estopped:
            raise EStopActiveError(what)
        if not self._running:
            raise CommandRefusedError("the speech service is not running")
        if len(self._queue) >= self._max_queue:
            raise CommandRefusedError(f"{self._max_queue} utterances already waiting")
        return f"u{next(self._ids)}-{uuid.uuid4().hex[:6]}"

    def script(self, text: str) -> Script:
        """``text``'s script (what ``speak`` would refuse raises; nothing is said)."""
        return self.cues.script(text)

    def prepare(self, texts: Sequence[str], locale: str = "en-US") -> None:
        """Synthesize ``texts`` ahead of time, when the worker is idle, into the cache of the
        engine that would speak them (one without a cache ignores them): said later, they
        play at once. Nothing is played or published; returns at once."""
        with self._cond:
            for given in texts:
                text = given.strip()
                if text and len(text) <= MAX_SPEECH_TEXT:
                    self._preparing.append((text, locale))
            self._cond.notify_all()

    def stop_speaking(self, reason: SpeechEndReason = "stopped") -> None:
        """Barge-in: silence now, lips released, sway dropped; the current utterance and the
        waiting ones get their ``end_speak`` (``reason``) now, not when the worker gets to it
        (it may be inside a long synthesis call)."""
        with self._cond:
            ending = list(self._queue)
            self._queue.clear()
            current = self._current
            if current is not None:
                ending.insert(0, current)
                current.cancel.set()
                current.finished.set()  # the worker waits on it for the playback to end
            for u in ending:
                # before the lock is released: the worker, woken by `finished`, may end the
                # utterance before this thread does, and must give the same reason
                u.reason = reason
            self.sink.stop()  # the playback clock freezes: lips and sway follow it
            self._player.clear()
            self._cond.notify_all()
        self._motion.release_override(LIPS)
        self._motion.clear_offset(SWAY, immediate=True)
        self.cues.release()
        with self._cond:  # held: no other utterance's start_speak between these ends
            for u in ending:
                self._end(u, reason)

    def end_utterance(self, u: Utterance, reason: SpeechEndReason) -> None:
        """End ``u`` alone, now (a voice stream's stop): dropped from the queue, or, playing,
        silenced as :meth:`stop_speaking` silences it; those queued behind it play on. All
        under the lock, so the worker starts the next one only after this."""
        with self._cond:
            if u.ended:
                return
            u.reason = reason
            u.cancel.set()
            if u is self._current:
                u.finished.set()
                self.sink.stop()
                self._player.clear(u)
                self._motion.release_override(LIPS)
                self._motion.clear_offset(SWAY, immediate=True)
                self.cues.release()
            elif u in self._queue:
                self._queue.remove(u)
            self._cond.notify_all()
            self._end(u, reason)

    # ------------------------------------------------------------------ worker: synthesis
    def _next(self) -> Utterance | None:
        """The next utterance; while none waits, the texts to prepare, one at a time."""
        while True:
            with self._cond:
                while self._running and not self._queue and not self._preparing:
                    self._clock.wait_notified(self._cond)  # on the clock: a fake one sees it idle
                if not self._running:
                    return None
                if self._queue:
                    self._current = self._queue.popleft()
                    self._making = True
                    return self._current
                text, locale = self._preparing.popleft()
            prepare(self.engines, text, locale)

    def _work(self) -> None:
        try:
            # the voices load on this thread, not at start-up; the engines that fail are dropped
            self.engines = load_engines(self.engines, self._events, self._clock)
        finally:
            self._loaded.set()
        while (u := self._next()) is not None:
            try:
                self._synthesize(u)
                if not u.cancel.is_set:
                    self._clock.wait(u.finished)  # the player sets it once the last sample played
            except SpeechError as exc:
                log.warning("speech failed: %s", exc)
                u.reason = "error"
                self._events.publish(Notice(t=self._clock.now(), source="speech", message=str(exc)))
            except Exception as exc:  # one bad utterance must not end the service
                log.exception("speech failed")
                u.reason = "error"
                self._events.publish(
                    Notice(t=self._clock.now(), source="speech", message=repr(exc))
                )
            finally:
                with self._cond:
                    self._player.clear(u)
                    self._current = None
                self._motion.clear_offset(SWAY)
                self._end(u, u.reason)

    def _synthesize(self, u: Utterance) -> None:
        try:
            if u.pump is not None:  # a voice stream: its audio comes as it is fed
                if self._before is not None:
                    self._before()
                u.pump()
                return
            engine = engine_for(self.engines, u, self._events, self._clock)
            if self._before is not None:
                self._before()
            self._synthesis.make(u, engine)
        finally:
            self._made()

    def _made(self, making: bool = False) -> None:
        with self._cond:
            self._making = making

    # ------------------------------------------------------------------ player: the playback clock
    def _play(self) -> None:
        self._player.run(lambda: self._running, lambda: self.stop_speaking("estop"))

    def _start(self, u: Utterance) -> None:
        """Publish ``u``'s start_speak, once (the player, as its first audio goes out)."""
        with self._cond:
            if u.started or u.ended:
                return
            u.started = True
            log.info("saying %s: %s", u.id, quoted(u.text))  # what the robot says, as it starts
            self._events.publish(
                SpeechStarted(t=self._clock.now(), utterance=u.id, text=u.text, locale=u.locale)
            )

    def _end(self, u: Utterance, reason: SpeechEndReason) -> None:
        """Publish ``u``'s end_speak, once: a stop and the worker may both end it (one that
        never sounded gets its start_speak first, so every end has its start)."""
        with self._cond:
            if u.ended:
                return
            self._start(u)
            u.ended = True
            if u.on_end is not None:
                u.on_end()
            self._events.publish(SpeechEnded(t=self._clock.now(), utterance=u.id, reason=reason))
