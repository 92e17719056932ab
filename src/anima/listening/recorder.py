"""One listening round after another, on the audio stream's own time (single-threaded, no I/O).

The :class:`Recorder` is fed every frame of the stream, with gate changes and wakes in between,
and answers with outcomes (:mod:`anima.listening.outcomes`);
:class:`~anima.listening.listener.Listener` runs it on a thread and turns outcomes into the typed
results it sends up (:mod:`anima.listening.results`). A round::

    idle ──wake──▶ recording: VAD only, the last pre_buffer_s kept ──speech starts──▶
        the kept audio, then every frame, to the ASR (partials) ──endpoint_silence_s──▶ final

- **Wake**: the wake phrase (the spotter runs on every frame, idle or not) or :meth:`wake`.
  Recording begins where the phrase ended, so "hey robot wave" said in one breath keeps "wave";
  a manual wake keeps the last ``pre_buffer_s`` before it. A wake during a round restarts it.
- **Give up**: no speech within ``no_speech_timeout_s`` (``no_speech``); an endpoint with an
  empty result waits for more speech, up to ``silence_timeout_s`` after the last (``silence``);
  a result shorter than ``min_chars`` is discarded (``too_short``). An utterance longer than
  ``max_utterance_s`` is cut and decided as it is (``max_length`` when nothing was recognized);
  when the source ends, the round is decided with what it has (``source_ended``).
- **Gate**: while gated (the robot speaks), frames are dropped before anything sees them, and for
  ``ungate_hold_s`` after; a round in progress is paused, and its timers do not run. With
  ``wake_while_gated`` the spotter still hears the gated audio, and the phrase heard there is a
  barge-in: the recorder lifts the gate itself at once (no hold) and records from the phrase's
  end, so "hey robot … stop" said over the robot keeps its "stop" — before, the gated frames
  after the phrase were dropped until the conversation's ``gate(False)`` and the hold after it,
  and the clipped rest was heard as the nearest command ("nod").
- **Full duplex** (``listen.duplex``): the robot's speech does not gate; :meth:`speaking` says
  it is talking, and the frames (the echo canceller's output) are searched for a voice then:
  the VAD's speech start while idle is a **barge-in**, a wake with source ``barge_in`` whose
  round records from ``pre_buffer_s`` before the voice began — the person's first word whole.
  Whether it stops the robot is the conversation's to decide (a backchannel does not).
- **Early** (full duplex, ``listen.turn_early_s``): a pause that may end the turn but has not
  yet (the detector's ``PAUSED``) sends the utterance so far as :class:`Early` (a recognizer
  that reads ahead, :class:`~anima.listening.asr.ReadsAhead`), and the voice coming back in the
  same utterance :class:`Resumed`: the conversation may begin its reply at the first and takes
  it back at the second. The round goes on either way and ends with its :class:`Final`. No
  early reading is made while the robot speaks (a barge-in's round).
- **Confidence**: the recognizer's ``confidence`` after ``finish()`` goes into :class:`Final`,
  with its ``alternatives`` (other readings, best first; Whisper's beam) and ``voiced_s``, how
  long the voice was (the round's frames the VAD found voiced: a backchannel is short);
  each partial also goes to the speech detector (``detector.partial``: its turn detector).

Positions are sample indices in the stream; seconds are audio seconds.
"""

from __future__ import annotations

import collections
from dataclasses import dataclass, field

import numpy as np

from anima.audio import FRAME_SAMPLES, SAMPLE_RATE, Frame, Framer
from anima.config.listening import ListenConfig
from anima.listening.asr import ReadsAhead, Recognizer
from anima.listening.outcomes import (
    Early,
    Final,
    GaveUp,
    Outcome,
    Partial,
    RecordingStarted,
    Resumed,
    Round,
    RoundEnded,
    Woke,
)
from anima.listening.speech_detector import SpeechChange, SpeechDetector
from anima.listening.wake.spotter import Spotter, WakeHit

HELD_SHARE = 0.6  # full duplex: the share of voiced frames that makes a voice over the robot held
# the silence the spotter hears when the stream ends while idle (its VAD ends a stretch after
# 0.3 s of it; the rest lets a round the phrase began reach its endpoint)
END_SILENCE_S = 1.0
_RING_S = 3.0  # audio kept while idle: covers the spotter's delay (the ASR spotter reports at
# the end of a 2 s stretch at the latest) and the pre-buffer


@dataclass
class _Active:
    """The state of the round in progress (positions as in :class:`Round`)."""

    wake_source: str
    start_position: int
    wake_position: int
    framer: Framer = field(default_factory=Framer)
    position: int = 0  # stream position of the next recorded frame
    recorded: int = 0  # samples recorded (gated audio excluded)
    preroll: collections.deque[Frame] = field(default_factory=collections.deque)
    replay: Frame | None = None  # audio from before the wake, not yet recorded
    asr_on: bool = False
    asr_since: int = 0  # ``recorded`` when the ASR last started
    last_speech: int | None = None  # ``recorded`` at the end of the last speech frame
    voiced: int = 0  # samples in frames the VAD found voiced (its start threshold)
    asr_first: int | None = None
    speech_start: int | None = None
    speech_end: int | None = None
    early: bool = False  # an Early was sent and no Resumed since

    def close(self, outcome: str, text: str) -> Round:
        return Round(
            wake_source=self.wake_source, start_position=self.start_position,
            wake_position=self.wake_position, asr_first_position=self.asr_first,
            speech_start_position=self.speech_start, speech_end_position=self.speech_end,
            endpoint_position=self.position, text=text, outcome=outcome,
        )  # fmt: skip


class Recorder:
    """The state machine of listening rounds (see the module docstring)."""

    def __init__(
        self,
        config: ListenConfig,
        recognizer: Recognizer,
        detector: SpeechDetector,
        spotter: Spotter | None = None,
    ) -> None:
        self.config = config
        self.recognizer = recognizer
        self.detector = detector
        self.spotter = spotter
        self.position = 0  # stream position of the next frame
        self.gated = False
        self.robot_speaking = False  # full duplex: a voice while idle is a barge-in
        self._hold_until = 0  # frames before this position are dropped (after an ungate)
        # (position, frame, gated): gated audio is kept only for a barge-in (wake_while_gated)
        self._ring: collections.deque[tuple[int, Frame, bool]] = collections.deque(
            maxlen=max(1, round(_RING_S * SAMPLE_RATE / FRAME_SAMPLES))
        )
        self._preroll_frames = round(config.pre_buffer_s * SAMPLE_RATE / FRAME_SAMPLES)
        self._active: _Active | None = None
        self._silence_at = -1  # where the silence end() gives the spotter ends
        # full duplex: whether each of the round's last barge_in_s of frames was voiced
        self._voiced: collections.deque[bool] = collections.deque(
            maxlen=max(1, round(config.barge_in_s * SAMPLE_RATE / FRAME_SAMPLES))
        )

    @property
    def recording(self) -> bool:
        return self._active is not None

    def gate(self, active: bool) -> None:
        """Ignore the audio (``True``) or listen again (``False``, after ``ungate_hold_s``)."""
        if active and not self.gated:
            self._ring.clear()
            if self._active is not None:
                self._active.preroll.clear()
        elif not active and self.gated:
            self._hold_until = self.position + round(self.config.ungate_hold_s * SAMPLE_RATE)
        self.gated = active

    @property
    def voice_held(self) -> bool:
        """Full duplex: the round's voice went on — voiced in most (60 %) of the last
        ``barge_in_s`` of frames, the last one too. A backchannel is too short for it, and a
        voice that started late in the window (after a false start) is not counted."""
        voiced = self._voiced
        return (
            self._active is not None and len(voiced) == voiced.maxlen and voiced[-1]
            and sum(voiced) >= HELD_SHARE * len(voiced)
        )  # fmt: skip

    def speaking(self, active: bool) -> None:
        """Full duplex: the robot is talking (``True``) or has stopped; nothing is dropped."""
        if active and not self.robot_speaking and self._active is None:
            self.detector.reset()
        self.robot_speaking = active

    def _barge_in(self, frame: Frame, position: int) -> list[Outcome]:
        """Idle while the robot talks: a voice starting is a barge-in (a round from its onset)."""
        if self.detector.feed(frame) is not SpeechChange.STARTED:
            return []
        onset = position - (self.detector.start_frames - 1) * FRAME_SAMPLES
        begin = onset - self._preroll_frames * FRAME_SAMPLES
        hit = WakeHit(phrase="", end_sample=begin, detected_sample=position + len(frame))
        return self.wake("barge_in", hit)

    def wake(self, source: str = "manual", hit: WakeHit | None = None) -> list[Outcome]:
        """Start a round now (restarting one in progress)."""
        out: list[Outcome] = [Woke(source=source, phrase=hit.phrase if hit else "")]
        restarted = self._active is not None
        if self._active is not None:
            self.recognizer.cancel()
            out.append(RoundEnded(round=self._active.close("restarted", "")))
        if hit is not None:
            begin = hit.end_sample  # the command may follow the phrase without a pause
        elif restarted:
            begin = self.position  # what came before was the dropped round's
        else:  # whole frames, so the recording's frames stay those of the stream
            begin = self.position - self._preroll_frames * FRAME_SAMPLES
        # a barge-in records the gated audio after its phrase; nothing else records gated audio
        barge_in = hit is not None and self.gated
        kept = [(p, f) for p, f, g in self._ring if p + len(f) > begin and (barge_in or not g)]
        begin = max(begin, kept[0][0]) if kept else self.position
        if barge_in:  # the person talks over the robot: listen now (the robot is being stopped)
            self.gated, self._hold_until = False, 0
        active = self._active = _Active(
            wake_source=source,
            start_position=begin,
            wake_position=self.position,
            position=begin,
            preroll=collections.deque(maxlen=max(1, self._preroll_frames)),
        )
        self.detector.reset()
        self._voiced.clear()
        out.append(RecordingStarted(restarted=restarted))
        if kept:  # recorded with the next frame, so the wake is reported without waiting for it
            active.replay = np.concatenate([f for _, f in kept])[begin - kept[0][0] :]
        return out

    def feed(self, frame: Frame) -> list[Outcome]:
        """One frame of the stream (exactly :data:`FRAME_SAMPLES` samples)."""
        position = self.position
        self.position += len(frame)
        if self.gated or position < self._hold_until:
            if not (self.gated and self.config.wake_while_gated):
                return []
            self._ring.append((position, frame, True))
            return self._spot(frame, position)  # a barge-in's audio is recorded from the next
        self._ring.append((position, frame, False))
        out = self._spot(frame, position)
        if self.robot_speaking and self._active is None and not out:
            out = self._barge_in(frame, position)
            if out:
                return out  # the round replays the voice from its onset with the next frame
        active = self._active
        if active is not None and not any(isinstance(o, Woke) for o in out):
            out += self._catch_up(active, frame, position)
        return out

    def _catch_up(self, active: _Active, frame: Frame | None, position: int) -> list[Outcome]:
        """Record the audio kept at the wake, then ``frame`` (at stream ``position``)."""
        out: list[Outcome] = []
        if active.replay is not None:
            replay, active.replay = active.replay, None
            out += self._record_audio(active, replay)
        if frame is not None and self._active is active:
            if active.position + active.framer.pending != position:
                active.framer.clear()  # gated audio came between: restart the framing here
                active.position = position
            out += self._record_audio(active, frame)
        return out

    def _record_audio(self, active: _Active, audio: Frame) -> list[Outcome]:
        out: list[Outcome] = []
        for frame in active.framer.feed(audio):
            out += self._record(active, frame)
            if self._active is not active:
                break
        return out

    def end(self) -> list[Outcome]:
        """The stream ended: decide the round in progress with what it has. Idle, the spotter
        first hears :data:`END_SILENCE_S` of silence: a spotter that waits for the end of a
        stretch of speech (``asr``) never read a phrase the stream ended in ("hey robot, wave"
        with nothing after it went unheard); a wake there records the rest as usual."""
        out: list[Outcome] = []
        idle = self._active is None and self.spotter is not None and not self.gated
        if idle and self._silence_at != self.position:  # once per end of the stream
            silence = np.zeros(FRAME_SAMPLES, dtype=np.int16)
            for _ in range(round(END_SILENCE_S * SAMPLE_RATE / FRAME_SAMPLES)):
                out += self.feed(silence)
                if any(isinstance(o, RoundEnded) for o in out):
                    break  # the round the phrase began was decided in the silence
            self._silence_at = self.position
        active = self._active
        if active is None:
            return out
        out += self._catch_up(active, None, self.position)
        if self._active is not active:
            return out
        text = self.recognizer.finish() if active.asr_on else ""
        return out + self._decide(active, text.strip(), "source_ended")

    def _spot(self, frame: Frame, position: int) -> list[Outcome]:
        if self.spotter is None:
            return []
        hit = self.spotter.feed(frame, position)
        return self.wake(self.spotter.name, hit) if hit is not None else []

    def _record(self, active: _Active, frame: Frame) -> list[Outcome]:
        cfg, out = self.config, list[Outcome]()
        position = active.position
        active.position += len(frame)
        active.recorded += len(frame)
        change = self.detector.feed(frame)
        voiced = self.detector.probability >= self.detector.start_threshold
        self._voiced.append(voiced)
        active.voiced += len(frame) if voiced else 0
        if self.detector.speaking:
            active.last_speech = active.recorded
        if not active.asr_on:
            active.preroll.append(frame)
        if change is SpeechChange.STARTED and not active.asr_on:
            first = position + len(frame) - len(active.preroll) * FRAME_SAMPLES
            onset = position - (self.detector.start_frames - 1) * FRAME_SAMPLES
            if active.asr_first is None:
                active.asr_first, active.speech_start = first, onset
            self.recognizer.start()
            active.asr_on, active.asr_since = True, active.recorded
            for kept in active.preroll:
                out += self._partial(kept)
            active.preroll.clear()
        elif active.asr_on:
            out += self._partial(frame)
        if change is SpeechChange.PAUSED and active.asr_on and not self.robot_speaking:
            # not over the robot: a voice there is a barge-in's to judge (the conversation would
            # drop the reading), and reading ahead would hold up the frames its rules need
            out += self._early(active)
        elif change is SpeechChange.RESUMED and active.early:
            active.early = False
            out.append(Resumed())
        if change is SpeechChange.ENDED and active.asr_on:
            end = position + len(frame) - self.detector.end_frames * FRAME_SAMPLES
            active.speech_end = end
            text = self.recognizer.finish().strip()
            active.asr_on = False
            if text:
                return out + self._decide(active, text, "final")
            # an endpoint with nothing recognized: wait for more speech (the seed's reset)
        if active.asr_on and (
            active.recorded - active.asr_since >= self._samples(cfg.max_utterance_s)
        ):
            return out + self._decide(active, self.recognizer.finish().strip(), "max_length")
        if active.last_speech is None:
            if active.recorded >= self._samples(cfg.no_speech_timeout_s):
                return out + self._decide(active, "", "no_speech")
        elif not active.asr_on and (
            active.recorded - active.last_speech >= self._samples(cfg.silence_timeout_s)
        ):
            return out + self._decide(active, "", "silence")
        return out

    def _partial(self, frame: Frame) -> list[Outcome]:
        text = self.recognizer.feed(frame)
        if not text:
            return []
        self.detector.partial(text)
        return [Partial(text=text)]

    def _early(self, active: _Active) -> list[Outcome]:
        """A pause that may end the turn: the utterance so far, when the recognizer can read
        ahead and heard enough words."""
        recognizer = self.recognizer
        if not isinstance(recognizer, ReadsAhead):
            return []
        reading = recognizer.tentative()
        text = reading.text.strip()
        if len(text) < max(1, self.config.min_chars):
            return []
        active.early = True
        return [Early(text=text, confidence=reading.confidence,
                      alternatives=tuple(reading.alternatives),
                      voiced_s=active.voiced / SAMPLE_RATE)]  # fmt: skip

    def _decide(self, active: _Active, text: str, reason: str) -> list[Outcome]:
        """End the round: a final transcript, or giving up with ``reason``."""
        waited = active.recorded / SAMPLE_RATE
        if text and len(text) >= self.config.min_chars:
            recognizer = self.recognizer
            out: list[Outcome] = [Final(text=text, confidence=recognizer.confidence,
                                        alternatives=tuple(recognizer.alternatives),
                                        voiced_s=active.voiced / SAMPLE_RATE)]  # fmt: skip
            reason = "final"
        elif text:
            out, reason = [GaveUp(reason="too_short", waited_s=waited, text=text)], "too_short"
        else:
            out = [GaveUp(reason=reason, waited_s=waited)]
        self._active = None
        return [*out, RoundEnded(round=active.close(reason, text))]

    @staticmethod
    def _samples(seconds: float) -> int:
        return round(seconds * SAMPLE_RATE)
