"""The listening pipeline as one object: wake → record → endpoint → transcript.

:class:`Listener` owns one worker thread that takes, from one queue, the source's frames and the
caller's requests, and runs the :class:`~anima.listening.recorder.Recorder` (see there for what a
round does). Nothing polls: the worker blocks on the queue. ``wake()`` and ``stop()`` jump the
queue (interrupts are never stuck behind audio); ``gate()`` stays in order with the audio, since
it says which audio to ignore.

Results go up as one stream of typed results (:data:`~anima.listening.results.ListenResult`:
wake, recording started, partial and final transcripts, gave up, notice, the round's report) to
the one consumer given as ``results``, in order, on the worker thread (keep it short: hand work
off). The consumer publishes what the outside world is told (:mod:`anima.listening.results`).
:func:`~anima.listening.making.make_listener` makes one from its config.
"""

from __future__ import annotations

import itertools
import logging
import queue
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from anima import heap
from anima.audio import FRAME_SAMPLES, Frame
from anima.clock import Clock, MonotonicClock
from anima.config.listening import ListenConfig
from anima.errors import EngineStateError
from anima.events import ListenTimeout, Notice, Transcript, WakeDetected
from anima.listening.asr import Recognizer
from anima.listening.makers import make_recognizer, make_spotter
from anima.listening.outcomes import (
    Early,
    Final,
    GaveUp,
    Outcome,
    Partial,
    RecordingStarted,
    Resumed,
    Woke,
)
from anima.listening.recorder import Recorder
from anima.listening.results import (
    EarlyTranscript,
    ListenResult,
    RecordingStart,
    RoundReport,
    TurnResumed,
)
from anima.listening.sources import AudioSource
from anima.listening.speech_detector import SpeechDetector
from anima.listening.turn.detector import turn_for
from anima.listening.vad import EnergyVad, Vad, load_vad
from anima.listening.wake.spotter import Spotter
from anima.listening.wake.trigger import WakeTrigger
from anima.logtext import quoted

logger = logging.getLogger(__name__)

_URGENT, _IN_ORDER = 0, 1  # queue priorities: interrupts before audio


def speech_detector(config: ListenConfig, vad: Vad) -> SpeechDetector:
    """The VAD's speech detector as ``config`` sets it, with its turn detector loaded
    (``listen.turn`` and its silences: ``turn_quick_s``, ``turn_hold_s``; with
    ``listen.duplex``, ``turn_early_s``: a reply begun early can be taken back only while the
    microphone stays open, and the turn's own end then waits ``turn_confirm_quick_s`` and
    ``turn_confirm_endpoint_s``)."""
    turn = turn_for(config)
    turn.load()
    early = config.turn_early_s if config.early_reply else None
    return SpeechDetector(
        vad, start_threshold=config.vad_start_threshold, end_threshold=config.vad_end_threshold,
        start_frames=config.vad_start_frames, end_s=config.turn_silences()[1], turn=turn,
        early_s=early,
    )  # fmt: skip


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
    started. ``results`` takes everything the listener sends up (module docstring). The
    constructor loads nothing; ``start`` loads the models (~0.1–0.3 s; Whisper
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
        results: Callable[[ListenResult], None] | None = None,
    ) -> None:
        self.config = config = config or ListenConfig()
        self.source = source
        self.clock = clock or MonotonicClock(spin_s=0.0)
        self._results = results
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
            self._vad = load_vad(self.config.vad, gate_db=self.config.vad_gate_db)
            if self.config.vad == "auto" and isinstance(self._vad, EnergyVad):
                self._notice("Silero VAD unavailable: using the energy VAD")
        self._vad.load()
        self.recognizer.load()
        if self.spotter is not None:
            self.spotter.load()
        turn_for(self.config).load()  # its imports (~16 ms), before the runtime's loop runs
        heap.release()  # what loading freed (Whisper's conversion to int8: ~50 MB)

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
                part.close()
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
            self._send(self._result(outcome, arrival_t))

    def _result(self, outcome: Outcome, arrival_t: float) -> ListenResult:
        """The result the consumer is sent for one of the recorder's outcomes (and its log)."""
        now = self.clock.now()
        if isinstance(outcome, Woke):
            if outcome.source != "manual":
                self._wake_t = arrival_t
            return WakeDetected(t=now, source=outcome.source, phrase=outcome.phrase)
        if isinstance(outcome, RecordingStarted):
            self._started_t = now
            return RecordingStart(t=now, restarted=outcome.restarted)
        if isinstance(outcome, Final):
            logger.info("heard: %s%s", quoted(outcome.text), _confidence(outcome.confidence))
            return Transcript(t=now, text=outcome.text, final=True, confidence=outcome.confidence,
                              alternatives=outcome.alternatives,
                              voiced_s=outcome.voiced_s)  # fmt: skip
        if isinstance(outcome, Partial):
            return Transcript(t=now, text=outcome.text, final=False)
        if isinstance(outcome, Early):
            logger.info("the turn may be over: %s", quoted(outcome.text))
            return EarlyTranscript(t=now, text=outcome.text, confidence=outcome.confidence,
                                   alternatives=outcome.alternatives,
                                   voiced_s=outcome.voiced_s)  # fmt: skip
        if isinstance(outcome, Resumed):
            logger.info("the person goes on")
            return TurnResumed(t=now)
        if isinstance(outcome, GaveUp):
            logger.info(
                "heard nothing to act on (%s after %.1f s%s)", outcome.reason,
                outcome.waited_s, f": {quoted(outcome.text)}" if outcome.text else "",
            )  # fmt: skip
            return ListenTimeout(
                t=now, reason=outcome.reason, waited_s=outcome.waited_s, text=outcome.text
            )
        return RoundReport(
            round=outcome.round, wake_t=self._wake_t, started_t=self._started_t,
            decided_arrival_t=arrival_t if outcome.round.outcome != "restarted" else None,
            decided_t=self.clock.now(),
        )  # fmt: skip

    def _notice(self, message: str) -> None:
        self._send(Notice(t=self.clock.now(), source="listen", message=message))

    def _send(self, result: ListenResult) -> None:
        if self._results is None:
            return
        try:
            self._results(result)
        except Exception:  # the consumer's fault must not end the worker
            logger.exception("listener: the consumer of %s failed", type(result).__name__)


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
