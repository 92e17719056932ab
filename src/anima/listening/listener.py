"""The listening pipeline as one object: wake → record → endpoint → transcript.

:class:`Listener` owns one worker thread that takes, from one queue, the source's frames and the
caller's requests, and runs the :class:`~anima.listening.recorder.Recorder` (see there for what a
round does). Nothing polls: the worker blocks on the queue. ``wake()`` and ``stop()`` jump the
queue (interrupts are never stuck behind audio); ``gate()`` stays in order with the audio, since
it says which audio to ignore.

Results come out as callbacks, on the worker thread (keep them short: hand work off), and as
events on an :class:`~anima.events.EventHub` when one is given: :class:`WakeDetected` (``wake``),
:class:`Transcript` (``asr``, partial then final), :class:`ListenTimeout` (``listen_timeout``).
``on_round`` gets a :class:`RoundReport` per round with its stream positions and clock times,
for benchmarks.
"""

from __future__ import annotations

import itertools
import logging
import queue
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TypeVar

from anima.clock import Clock, MonotonicClock
from anima.config.listening import ListenConfig
from anima.errors import EngineStateError
from anima.events import Event, ListenTimeout, Notice, Publisher, Transcript, WakeDetected
from anima.listening.asr import Recognizer
from anima.listening.audio import FRAME_SAMPLES, Frame
from anima.listening.makers import make_recognizer, make_spotter
from anima.listening.recorder import (
    Final,
    GaveUp,
    Outcome,
    Partial,
    Recorder,
    RecordingStarted,
    Round,
    Woke,
)
from anima.listening.sources import AudioSource
from anima.listening.turn.detector import turn_for
from anima.listening.vad import EnergyVad, SpeechDetector, Vad, load_vad
from anima.listening.wake.spotter import Spotter
from anima.listening.wake.trigger import WakeTrigger
from anima.logtext import quoted

logger = logging.getLogger(__name__)

_T = TypeVar("_T")
_URGENT, _IN_ORDER = 0, 1  # queue priorities: interrupts before audio


def speech_detector(config: ListenConfig, vad: Vad) -> SpeechDetector:
    """The VAD's speech detector as ``config`` sets it, with its turn detector loaded
    (``listen.turn`` and its silences: ``turn_quick_s``, ``turn_hold_s``)."""
    turn = turn_for(config)
    turn.load()
    return SpeechDetector(
        vad, start_threshold=config.vad_start_threshold, end_threshold=config.vad_end_threshold,
        start_frames=config.vad_start_frames, end_s=config.endpoint_silence_s, turn=turn,
    )  # fmt: skip


@dataclass(frozen=True, kw_only=True)
class RecordingStart:
    """Recording began (``t``: clock seconds); ``restarted`` when it replaced a round."""

    t: float
    restarted: bool


@dataclass(frozen=True, kw_only=True)
class RoundReport:
    """One round's stream positions and clock times (``None``: it did not happen)."""

    round: Round
    wake_t: float  # a manual wake: when wake() was called; a phrase: when its frame arrived
    started_t: float  # when recording started (after the wake was handled)
    decided_arrival_t: float | None  # when the frame that decided the round arrived
    decided_t: float  # when the outcome had been delivered to the callbacks


@dataclass(frozen=True)
class _Message:
    kind: str  # frame | end | gate | speaking | wake | sync | stop
    t: float  # clock seconds when it was queued
    frame: Frame | None = None
    text: str = ""  # end: the reason; wake: the source
    flag: bool = False  # gate: active
    done: threading.Event | None = field(default=None, compare=False)


class Listener:
    """Wake word, VAD recording, ASR transcript — ``start()`` / ``stop()``, ``gate()``, ``wake()``.

    ``phrases`` are the commands (pocketsphinx's grammar, Whisper's vocabulary). The recognizer,
    VAD, spotter and turn detector default to what ``config`` names (``asr``,
    :func:`~anima.listening.vad.load_vad` for ``vad``, ``wake`` when ``config.wake_word``,
    ``turn``); pass others to replace them. ``trigger`` connects a :class:`WakeTrigger` while
    started. The constructor loads nothing; ``start`` loads the models (~0.1–0.3 s; Whisper
    ~1 s) and opens the source.
    """

    def __init__(
        self,
        source: AudioSource,
        *,
        config: ListenConfig | None = None,
        phrases: Sequence[str] = (),
        recognizer: Recognizer | None = None,
        vad: Vad | None = None,
        spotter: Spotter | None = None,
        trigger: WakeTrigger | None = None,
        clock: Clock | None = None,
        hub: Publisher | None = None,
        on_wake: Callable[[WakeDetected], None] | None = None,
        on_recording_started: Callable[[RecordingStart], None] | None = None,
        on_partial: Callable[[Transcript], None] | None = None,
        on_final: Callable[[Transcript], None] | None = None,
        on_gave_up: Callable[[ListenTimeout], None] | None = None,
        on_round: Callable[[RoundReport], None] | None = None,
    ) -> None:
        self.config = config = config or ListenConfig()
        self.source = source
        self.clock = clock or MonotonicClock(spin_s=0.0)
        self._hub = hub
        # what the listener makes itself it also closes (worker processes, models); a
        # recognizer or spotter given here is the caller's to close
        self._owned: list[Recognizer | Spotter] = []
        if recognizer is None:
            recognizer = make_recognizer(config, phrases=phrases, on_notice=self._notice)
            self._owned.append(recognizer)
        self.recognizer = recognizer
        self._vad = vad
        self.spotter = spotter
        if spotter is None and config.wake_word:
            self.spotter = make_spotter(config, on_notice=self._notice)
            self._owned.append(self.spotter)
        self._trigger = trigger
        self._untrigger: Callable[[], None] | None = None
        self._on_wake = on_wake
        self._on_recording_started = on_recording_started
        self._on_partial = on_partial
        self._on_final = on_final
        self._on_gave_up = on_gave_up
        self._on_round = on_round
        self._queue: queue.PriorityQueue[tuple[int, int, _Message]] = queue.PriorityQueue()
        self._seq = itertools.count()
        self._thread: threading.Thread | None = None
        self._recorder: Recorder | None = None
        self._wake_t = 0.0
        self._started_t = 0.0

    @property
    def vad(self) -> Vad | None:
        """The VAD in use once started (:class:`EnergyVad` when Silero was unavailable)."""
        return self._vad

    @property
    def recording(self) -> bool:
        return self._recorder is not None and self._recorder.recording

    @property
    def voice_held(self) -> bool:
        """Full duplex: the round's voice has gone on for ``barge_in_s``
        (:attr:`Recorder.voice_held`; read from another thread: a snapshot)."""
        recorder = self._recorder
        return recorder is not None and recorder.voice_held

    def prepare(self) -> None:
        """Load the models (the VAD, the recognizer, the spotter); done again after a stop."""
        if self._vad is None:
            self._vad = load_vad(self.config.vad)
            if self.config.vad == "auto" and isinstance(self._vad, EnergyVad):
                self._notice("Silero VAD unavailable: using the energy VAD")
        self._vad.load()
        self.recognizer.load()
        if self.spotter is not None:
            self.spotter.load()
        turn_for(self.config).load()  # its imports (~16 ms), before the runtime's loop runs

    def start(self) -> None:
        """Load the models (when :meth:`prepare` did not), start the worker, then open the
        source."""
        if self._thread is not None:
            raise EngineStateError("listener: already started")
        self.prepare()
        assert self._vad is not None
        detector = speech_detector(self.config, self._vad)
        self._recorder = Recorder(self.config, self.recognizer, detector, self.spotter)
        self._thread = threading.Thread(target=self._run, name="anima-listen", daemon=True)
        self._thread.start()
        if self._trigger is not None:
            self._untrigger = self._trigger.connect(self.wake)
        try:
            self.source.start(_Sink(self))
        except BaseException:
            self.stop()
            raise

    def stop(self, timeout: float = 2.0) -> None:
        """Close the source, end the worker (a round in progress is dropped, unreported)."""
        if self._untrigger is not None:
            self._untrigger()
            self._untrigger = None
        thread, self._thread = self._thread, None
        if thread is None:
            return
        self.source.stop(timeout / 2)
        self._put(_URGENT, _Message("stop", self.clock.now()))
        thread.join(timeout / 2)
        if thread.is_alive():
            logger.warning("listener: the worker did not stop within %.1f s", timeout / 2)
        if self._recorder is not None and self._recorder.recording:
            self.recognizer.cancel()
        for part in self._owned:
            try:
                close = getattr(part, "close", None)  # not every Recognizer holds anything
                if close is not None:
                    close()
            except Exception:  # closing one worker must not keep the others open
                logger.exception("listener: closing %r failed", part)

    def __enter__(self) -> Listener:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def wake(self, source: str = "manual") -> None:
        """Wake now, as if the wake phrase was heard (a key, a button, MQTT): starts a round,
        or restarts the one in progress. Called before ``start``, the round begins with the
        source's first audio."""
        self._put(_URGENT, _Message("wake", self.clock.now(), text=source))

    def gate(self, active: bool) -> None:
        """Ignore the audio from here on (``True``: the robot is speaking) or listen again."""
        self._put(_IN_ORDER, _Message("gate", self.clock.now(), flag=active))

    def speaking(self, active: bool) -> None:
        """Full duplex (``listen.duplex``): the robot talks (``True``) or has stopped. Nothing is
        ignored; a voice heard meanwhile is a barge-in (a wake with source ``barge_in``)."""
        self._put(_IN_ORDER, _Message("speaking", self.clock.now(), flag=active))

    def sync(self, timeout: float = 5.0) -> bool:
        """Wait until everything queued before this call has been handled; False on timeout."""
        done = threading.Event()
        self._put(_IN_ORDER, _Message("sync", self.clock.now(), done=done))
        return done.wait(timeout)

    def _put(self, priority: int, message: _Message) -> None:
        self._queue.put((priority, next(self._seq), message))

    def _run(self) -> None:
        while True:
            message = self._queue.get()[2]
            if message.kind == "stop":
                return
            try:
                self._handle(message)
            except Exception:
                logger.exception("listener: handling %s failed", message.kind)
            finally:
                if message.done is not None:
                    message.done.set()

    def _handle(self, message: _Message) -> None:
        recorder = self._recorder
        assert recorder is not None
        if message.kind == "frame" and message.frame is not None:
            self._deliver(recorder.feed(message.frame), message.t)
        elif message.kind == "wake":
            self._wake_t = message.t
            self._deliver(recorder.wake(message.text), message.t)
        elif message.kind == "gate":
            recorder.gate(message.flag)
        elif message.kind == "speaking":
            recorder.speaking(message.flag)
        elif message.kind == "end":
            logger.info("listener: the %s source ended (%s)", self.source.name, message.text)
            self._deliver(recorder.end(), message.t)

    def _deliver(self, outcomes: list[Outcome], arrival_t: float) -> None:
        for outcome in outcomes:
            now = self.clock.now()
            if isinstance(outcome, Woke):
                if outcome.source != "manual":
                    self._wake_t = arrival_t
                wake = WakeDetected(t=now, source=outcome.source, phrase=outcome.phrase)
                self._call(self._on_wake, wake)
                event: Event = wake
            elif isinstance(outcome, RecordingStarted):
                self._started_t = now
                self._call(self._on_recording_started,
                           RecordingStart(t=now, restarted=outcome.restarted))  # fmt: skip
                continue
            elif isinstance(outcome, Final):
                logger.info("heard: %s%s", quoted(outcome.text), _confidence(outcome.confidence))
                heard = Transcript(t=now, text=outcome.text, final=True,
                                   confidence=outcome.confidence,
                                   alternatives=outcome.alternatives,
                                   voiced_s=outcome.voiced_s)  # fmt: skip
                self._call(self._on_final, heard)
                event = heard
            elif isinstance(outcome, Partial):
                heard = Transcript(t=now, text=outcome.text, final=False)
                self._call(self._on_partial, heard)
                event = heard
            elif isinstance(outcome, GaveUp):
                logger.info(
                    "heard nothing to act on (%s after %.1f s%s)", outcome.reason,
                    outcome.waited_s, f": {quoted(outcome.text)}" if outcome.text else "",
                )  # fmt: skip
                timeout = ListenTimeout(
                    t=now, reason=outcome.reason, waited_s=outcome.waited_s, text=outcome.text
                )
                self._call(self._on_gave_up, timeout)
                event = timeout
            else:
                report = RoundReport(
                    round=outcome.round, wake_t=self._wake_t, started_t=self._started_t,
                    decided_arrival_t=arrival_t if outcome.round.outcome != "restarted" else None,
                    decided_t=self.clock.now(),
                )  # fmt: skip
                self._call(self._on_round, report)
                continue
            self._publish(event)

    def _notice(self, message: str) -> None:
        self._publish(Notice(t=self.clock.now(), source="listen", message=message))

    def _publish(self, event: Event) -> None:
        if self._hub is not None:
            self._hub.publish(event)

    @staticmethod
    def _call(callback: Callable[[_T], None] | None, value: _T) -> None:
        if callback is None:
            return
        try:
            callback(value)
        except Exception:
            logger.exception("listener: callback %r failed", callback)


def _confidence(confidence: float | None) -> str:
    return "" if confidence is None else f" (confidence {confidence:.2f})"


class _Sink:
    """The :class:`~anima.listening.sources.FrameSink` a source delivers to: stamps and queues."""

    def __init__(self, listener: Listener) -> None:
        self._listener = listener

    def frame(self, samples: Frame) -> None:
        if len(samples) != FRAME_SAMPLES:
            raise ValueError(f"listener: frames are {FRAME_SAMPLES} samples, got {len(samples)}")
        listener = self._listener
        listener._put(_IN_ORDER, _Message("frame", listener.clock.now(), frame=samples))

    def end(self, reason: str) -> None:
        listener = self._listener
        listener._put(_IN_ORDER, _Message("end", listener.clock.now(), text=reason))
