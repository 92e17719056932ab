"""The speech service: one utterance at a time, lips and sway on the playback clock.

``speak()`` accepts a request and publishes ``start_speak`` at once (Nadine's semantics); a worker
synthesizes it and feeds the sink; a player thread follows the sink's playback clock, sets the
head sway every 50 ms hop and publishes ``end_speak`` when the last sample has played. The lips
are an override read by the motion engine every tick at the sink's playback position. Every
``start_speak`` gets exactly one ``end_speak`` (reason ``done``, ``stopped``, ``estop``,
``shutdown`` or ``error``): a stop ends the current and the waiting utterances at once, and
each utterance's end is published once whoever ends it first (the stop or the worker).

:meth:`SpeechService.prepare` hands the worker texts to synthesize ahead of time, when nothing
waits to be said, into an engine's cache (an engine with a ``prepare(text, locale)``: Piper's
:class:`~anima.speech.cache.ClauseCache`); nothing is played or published for them.

The silence an engine puts before an utterance's first sound is dropped (all but
:data:`LEAD_KEEP_S`; every mark moves with it), so the voice starts as soon as it can.

``speak()`` is the one way text reaches an engine, so it enforces what every path must: at most
:data:`~anima.commands.MAX_SPEECH_TEXT` characters, and nothing while the emergency stop is on.
"""

from __future__ import annotations

import collections
import gc
import itertools
import logging
import threading
import uuid
from collections.abc import Callable, Sequence

import numpy as np

from anima.body import FloatArray, Role
from anima.clock import Clock
from anima.commands import MAX_SPEECH_TEXT
from anima.errors import (
    CommandRefusedError,
    EStopActiveError,
    InvalidCommandError,
    SpeechError,
)
from anima.events import EventHub, Notice, SpeechEnded, SpeechEndReason, SpeechStarted
from anima.motion.engine import MotionEngine
from anima.speech.base import (
    AudioSink,
    TTSEngine,
)
from anima.speech.cues import HOLD_POLL_S, CuePlayer
from anima.speech.gestures import Gestures
from anima.speech.markup import Mode, Script, Segment
from anima.speech.sway import ZERO, SwayGenerator
from anima.speech.utterance import Output, Playback, Utterance, leading_silence, moved
from anima.speech.visemes import LipTrack

log = logging.getLogger(__name__)

LIPS, SWAY = "lips", "sway"
CUES = "speech-cues"  # the motion tick hook that fires annotated speech's cues
_LIP_ROLES = (Role.LIPS_OPEN, Role.LIPS_WIDE, Role.LIPS_NARROW)
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
    ) -> None:
        if not engines:
            raise SpeechError("no TTS engine available")
        self.engines = list(engines)
        self.sink = sink
        self._motion = motion
        self._events = events
        self._clock = clock
        self._before = before_speaking
        self._max_queue = max_queue
        self.cues = CuePlayer(motion, events, clock, gestures, gesture_mode)
        body = motion.body
        lips = [body.role_index(r) for r in _LIP_ROLES]
        self._lip_channels = [i for i in lips if i is not None]
        self._lip_cols = [k for k, i in enumerate(lips) if i is not None]  # of (open, wide, narrow)
        self._lip_lo = np.array([body.channels[i].default for i in self._lip_channels])
        self._lip_span = np.array([body.channels[i].max for i in self._lip_channels]) - self._lip_lo
        self._cond = threading.Condition()
        self._queue: collections.deque[Utterance] = collections.deque()
        self._preparing: collections.deque[tuple[str, str]] = collections.deque(
            maxlen=MAX_PREPARED
        )  # (text, locale) to synthesize into a cache when idle
        self._current: Utterance | None = None
        self._playback: Playback | None = None
        self._running = False
        self._making = False  # the worker is making an utterance's audio (not waiting on it)
        self._threads: list[threading.Thread] = []
        self._ids = itertools.count(1)
        self._loaded = threading.Event()  # set once _load_engines has returned
        motion.set_tick_hook(CUES, self._cue_tick)

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

    def stop(self, reason: SpeechEndReason = "shutdown") -> None:
        """End every utterance now (``end_speak`` with ``reason``), then stop the threads."""
        with self._cond:
            # first, so a speak() racing this is refused rather than queued for no worker
            self._running = False
            self._cond.notify_all()
        self.stop_speaking(reason)
        if self._threads and not self._loaded.wait(LOAD_WAIT_S):
            log.warning("speech: the engines still load after %.0f s; stopping anyway", LOAD_WAIT_S)
        for th in self._threads:
            th.join(2.0)
        self._threads = []
        self.sink.close()

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
        """Accept an utterance (``start_speak`` now); returns its id.

        ``text`` may carry gestures (:mod:`anima.speech.markup`): ``start_speak`` shows it
        without them. Refused: empty text, text over ``MAX_SPEECH_TEXT`` characters, a bad
        marker or one naming an animation the library lacks, a full queue, and anything while
        the emergency stop is on (until it is reset).
        """
        text = text.strip()
        if not text:
            raise InvalidCommandError("nothing to say: empty text")
        if len(text) > MAX_SPEECH_TEXT:
            raise InvalidCommandError(
                f"text of {len(text)} characters exceeds the {MAX_SPEECH_TEXT} limit "
                f"(starts {text[:40]!r})"
            )
        script = self.script(text)
        with self._cond:
            # checked under the lock stop_speaking() takes: a speak racing an estop is either
            # refused here or queued before the estop's stop_speaking() ends it
            if self._motion.estopped:
                raise EStopActiveError("speak")
            if not self._running:
                raise CommandRefusedError("the speech service is not running")
            if len(self._queue) >= self._max_queue:
                raise CommandRefusedError(f"{self._max_queue} utterances already waiting")
            u = Utterance(
                id=f"u{next(self._ids)}-{uuid.uuid4().hex[:6]}",
                text=script.text,
                locale=locale,
                script=script,
            )
            self._events.publish(
                SpeechStarted(t=self._clock.now(), utterance=u.id, text=u.text, locale=locale)
            )
            self._queue.append(u)
            self._cond.notify_all()
        return u.id

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
            self._playback = None
            self._cond.notify_all()
        self._motion.release_override(LIPS)
        self._motion.clear_offset(SWAY, immediate=True)
        self.cues.release()
        for u in ending:
            self._end(u, reason)

    # ------------------------------------------------------------------ engine thread
    def _lips(self, _t: float) -> FloatArray | None:
        pb = self._playback
        if pb is None:
            return None  # releases the override
        o, w, n = pb.lips.at(self.sink.played())
        values: FloatArray = self._lip_lo + self._lip_span * np.array((o, w, n))[self._lip_cols]
        return values

    # ------------------------------------------------------------------ worker: synthesis
    def _next(self) -> Utterance | None:
        """The next utterance; while none waits, the texts to prepare, one at a time."""
        while True:
            with self._cond:
                while self._running and not self._queue and not self._preparing:
                    self._cond.wait()
                if not self._running:
                    return None
                if self._queue:
                    self._current = self._queue.popleft()
                    self._making = True
                    return self._current
                text, locale = self._preparing.popleft()
            self._prepare(text, locale)

    def _prepare(self, text: str, locale: str) -> None:
        engine = next((e for e in self.engines if e.supports(locale)), None)
        prepare = getattr(engine, "prepare", None)
        if prepare is None:
            return
        try:
            prepare(text, locale)
        except Exception as exc:  # a text that cannot be prepared is simply synthesized later
            log.warning("speech: cannot prepare %r: %s", text[:40], exc)

    def _load_engines(self) -> None:
        """Load every engine's voices now (on this thread, not at start-up); drop failures."""
        usable = []
        for engine in self.engines:
            try:
                engine.load()
                usable.append(engine)
            except Exception as exc:  # a missing voice or library: the others still speak
                log.warning("speech engine %s unavailable: %s", engine.name, exc)
                self._events.publish(
                    Notice(t=self._clock.now(), source="speech", message=f"{engine.name}: {exc}")
                )
        if usable:
            self.engines = usable
        gc.freeze()  # the voices' objects live as long as the process (see Runtime.start)

    def _work(self) -> None:
        try:
            self._load_engines()
        finally:
            self._loaded.set()
        while (u := self._next()) is not None:
            try:
                self._synthesize(u)
                if not u.cancel.is_set:
                    u.finished.wait()  # the player sets it once the last sample has played
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
                    if self._playback is not None and self._playback.utterance is u:
                        self._playback = None
                    self._current = None
                self._motion.clear_offset(SWAY)
                self._end(u, u.reason)

    def _engine_for(self, u: Utterance) -> TTSEngine:
        for engine in self.engines:
            if engine.supports(u.locale):
                return engine
        fallback = next((e for e in self.engines if e.supports("en-US")), self.engines[0])
        self._events.publish(
            Notice(
                t=self._clock.now(),
                source="speech",
                message=f"no voice for locale {u.locale!r}: speaking English ({fallback.name})",
            )
        )
        u.locale = "en-US"
        return fallback

    def _synthesize(self, u: Utterance) -> None:
        try:
            self._make(u)
        finally:
            self._made()

    def _made(self, making: bool = False) -> None:
        with self._cond:
            self._making = making

    def _make(self, u: Utterance) -> None:
        engine = self._engine_for(u)
        if self._before is not None:
            self._before()
        out = Output()
        for segment in u.script.segments:
            if segment.text:
                self._speak_segment(u, engine, segment, out)
            if u.cancel.is_set:
                return
            if segment.run or segment.wait:
                self._hold(u, segment)
            if u.cancel.is_set:
                return
        pb = out.playback
        if pb is None:
            u.finished.set()  # nothing to play (cancelled or empty audio)
            return
        pb.lips.end(self.sink.written())
        pb.synthesized = True
        with self._cond:
            self._cond.notify_all()

    def _speak_segment(
        self, u: Utterance, engine: TTSEngine, segment: Segment, out: Output
    ) -> None:
        """Synthesize one segment into the sink, after what the utterance already played; its
        cues are placed at the words the engine reports."""
        base = self.sink.written() if out.playback is not None else 0
        cues = collections.deque(segment.cues)
        trim: int | None = None  # leading silence dropped (every mark moves with it)
        heard = False  # the engine gave word marks
        for made in engine.synthesize(segment.text, u.locale, u.cancel):
            if u.cancel.is_set:
                return
            first = trim is None
            if trim is None:
                trim = leading_silence(made)
            chunk = moved(made, trim, cut=first, base=base)
            pb = out.playback
            if pb is None:
                self.sink.start(chunk.sample_rate)
                pb = out.playback = Playback(u, chunk.sample_rate, LipTrack(chunk.sample_rate))
                out.sway = SwayGenerator(chunk.sample_rate)
                with self._cond:
                    if u.cancel.is_set:
                        return
                    self._playback = pb
                    self._cond.notify_all()
                if self._lip_channels:
                    self._motion.set_override_source(LIPS, self._lip_channels, self._lips)
            sway = out.sway
            assert sway is not None
            pb.lips.add_phonemes(chunk.phonemes)
            pb.lips.add_visemes(chunk.visemes)
            for word in chunk.words:
                heard = True
                while cues and cues[0].char <= word.char:
                    pb.cues.append((word.offset, cues.popleft()))
            out.pending = np.concatenate((out.pending, chunk.samples))
            while len(out.pending) >= sway.hop:
                pb.sway.append(sway.feed(out.pending[: sway.hop]))
                out.pending = out.pending[sway.hop :]
            self.sink.write(chunk.samples)
        pb = out.playback
        if pb is None:
            return
        end = self.sink.written()
        for cue in cues:  # after the last word heard, or no word timing: by characters
            share = 1.0 if heard else cue.char / max(1, len(segment.text))
            pb.cues.append((base + round(share * (end - base)), cue))
        pb.lips.end(end)  # the mouth closes between segments

    def _hold(self, u: Utterance, segment: Segment) -> None:
        """After a segment: let it play out, then its ``^run``/``^wait`` gestures (a stop ends
        the hold at once)."""
        self._made()  # waits on the playback from here
        with self._cond:
            while not u.cancel.is_set and self.sink.played() < self.sink.written():
                self._cond.wait(HOLD_POLL_S)
        if not u.cancel.is_set:
            self.cues.hold(segment, u.cancel)
        self._made(True)

    def _cue_tick(self, t: float) -> None:
        """First in every motion tick: the cues whose word the sink has reached."""
        pb = self._playback
        self.cues.tick(t, pb.cues if pb is not None else None, self.sink.played)

    # ------------------------------------------------------------------ player: the playback clock
    def _play(self) -> None:
        with self._cond:
            while self._running:
                pb = self._playback
                if pb is None:
                    self._cond.wait()
                    continue
                if self._motion.estopped:
                    # the runtime stops speech with its estop; this catches an estop of the
                    # engine itself (engine.estop()) within one hop
                    self.stop_speaking("estop")
                    continue
                played, written = self.sink.played(), self.sink.written()
                if pb.synthesized and played >= written:
                    pb.utterance.finished.set()
                    self._playback = None
                    continue
                hop = max(1, int(0.05 * pb.rate))
                k = played // hop
                s = pb.sway[k] if k < len(pb.sway) else ZERO
                self._motion.set_offset(SWAY, head=(s.roll, s.pitch, s.yaw))
                # sleep to the next hop boundary or the end of the audio, whichever is first
                until = min((k + 1) * hop, written) if pb.synthesized else (k + 1) * hop
                self._cond.wait(max(0.001, (until - played) / pb.rate))

    def _end(self, u: Utterance, reason: SpeechEndReason) -> None:
        """Publish ``u``'s end_speak, once: a stop and the worker may both end it."""
        with self._cond:
            if u.ended:
                return
            u.ended = True
            self._events.publish(SpeechEnded(t=self._clock.now(), utterance=u.id, reason=reason))
