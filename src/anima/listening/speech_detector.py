"""Speech start and end from a :class:`~anima.listening.vad.Vad`'s probabilities, with hysteresis.

A click does not start speech and a short pause inside a sentence does not end it. How long a
silence ends speech is fixed (``end_s``) or asked of a
:class:`~anima.listening.turn.detector.TurnDetector` (:mod:`anima.listening.turn.detector`); in
babble a level gate hears the silence the VAD does not; in full duplex the early pause
(``PAUSED`` / ``RESUMED``) lets a reply begin before the turn is sure.
"""

from __future__ import annotations

import logging
import math
from enum import Enum

import numpy as np

from anima.audio import FRAME_S, Frame
from anima.errors import ConfigError
from anima.listening.turn.detector import GatedTurn, MayEnd, TurnDetector, silence_frames
from anima.listening.vad import Vad

logger = logging.getLogger(__name__)


GATE_MIN_FRAMES = 8  # confidently voiced frames (~0.26 s) before an utterance has a level
GATE_PERCENTILE = 90.0  # of their levels: the voice's, not the room's between its words
GATE_LAG_FRAMES = 6  # frames (~0.2 s) below the gate before it says silence (no more clean cuts)
GATE_SMOOTH_FRAMES = 3  # a frame's level: the mean power of the last three (~0.1 s)


class SpeechChange(Enum):
    STARTED = "started"
    ENDED = "ended"
    # given ``early_s``: the turn may be over but is not yet (the cues are unsure); and the
    # voice back after such a pause (the same utterance goes on)
    PAUSED = "paused"
    RESUMED = "resumed"


class SpeechDetector:
    """Hysteresis on a :class:`Vad`: speech starts after ``start_frames`` consecutive frames at
    or above ``start_threshold`` and ends after a silence of frames below ``end_threshold``:
    ``end_s`` of it, or, given a :class:`~anima.listening.turn.detector.TurnDetector`
    ``turn``, as much as the turn detector asks for (it sees every frame of the utterance and
    the ASR's partials through :meth:`partial`). Given ``early_s`` (full duplex's early reply,
    ``listen.turn_early_s``), it also reports ``PAUSED`` at a silence that could end the turn
    before the turn detector's end, and ``RESUMED`` when the voice comes back after it."""

    def __init__(
        self,
        vad: Vad,
        *,
        start_threshold: float = 0.5,
        end_threshold: float = 0.35,
        start_frames: int = 2,
        end_s: float = 0.8,
        turn: TurnDetector | None = None,
        level_gate_db: float | None = None,
        gate_cues: bool | None = None,
        early_s: float | None = None,
    ) -> None:
        if not 0 < end_threshold <= start_threshold < 1:
            raise ConfigError("VAD thresholds must satisfy 0 < end ≤ start < 1")
        # the level gate is the turn detector's (CuesTurn: LEVEL_GATE_DB; SilenceTurn: none)
        gated = self._gated_turn = turn if isinstance(turn, GatedTurn) else None
        if level_gate_db is None and gated is not None:
            level_gate_db = gated.level_gate_db
        gate = level_gate_db
        if gate is not None and not (math.isfinite(gate) and gate > 0):
            raise ConfigError(f"VAD level gate must be > 0 dB, got {gate!r}")
        self.level_gate_db: float | None = gate
        self.vad = vad
        self.turn = turn
        self.start_threshold = start_threshold
        self.end_threshold = end_threshold
        self.start_frames = max(1, start_frames)
        self._end_frames = silence_frames(end_s)
        self.in_speech = False
        self.probability = 0.0  # of the last frame
        self._run = 0  # consecutive frames counting towards the next change
        self._ended_after = self._end_frames  # silent frames that ended the last utterance
        self._levels: list[float] = []  # dBFS of this utterance's confidently voiced frames
        self._speech_db: float | None = None  # their GATE_PERCENTILE, from GATE_MIN_FRAMES on
        self._recent: list[float] = []  # the power of the last frames
        self._below = 0  # consecutive frames below the gate
        self._gate_run = 0  # consecutive frames silent or gated: the gate's own run
        # the gate ends a turn after the turn detector's hold (the longest it waits), at least
        hold_s = gated.hold_s if gated is not None else 0.0
        self._hold_frames = max(self._end_frames, silence_frames(hold_s))
        # a silence only the gate hears ends as the turn's cues say (CuesTurn.gate_cues)
        if gate_cues is None:
            gate_cues = gated is not None and gated.gate_cues
        self.gate_cues = gate_cues
        self._gate_need: float | None = None  # the turn's silence, judged as the level fell
        if early_s is not None and not (math.isfinite(early_s) and early_s > 0):
            raise ConfigError(f"VAD: the early pause must be > 0 seconds, got {early_s!r}")
        self.early_s = early_s  # PAUSED after this much silence that may end the turn
        self._paused = False  # PAUSED was reported for the silence in progress

    @property
    def end_frames(self) -> int:
        """The frames of silence that ended the last utterance (the recorder dates the end of
        speech with it): ``end_s`` in frames, unless a turn detector chose another."""
        return self._ended_after

    def reset(self) -> None:
        self.vad.reset()
        if self.turn is not None:
            self.turn.reset()
        self.in_speech = False
        self.probability = 0.0
        self._run = 0
        self._gate_run = 0
        self._paused = False
        self._forget_level()

    def _forget_level(self) -> None:
        self._levels.clear()
        self._recent.clear()
        self._below = 0
        self._gate_need = None
        self._speech_db = None

    def _words_complete(self) -> bool:
        """The turn detector's words could end the request (a detector without words: yes)."""
        return self._gated_turn is None or self._gated_turn.words_complete()

    def _gated(self, frame: Frame, p: float) -> float:
        """``p``, or 0 when the frame is ``level_gate_db`` below this utterance's speech level:
        in babble Silero calls the room speech, so without this no silence would ever start
        (the person stopped; what remains is the room, well below their voice). The level is a
        high percentile of the confidently voiced frames (the voice, not the room between its
        words); each frame's is the mean power of the last GATE_SMOOTH_FRAMES (one loud
        syllable of babble does not restart the silence)."""
        gate = self.level_gate_db
        if gate is None:
            return p
        power = float(np.mean(np.square(frame, dtype=np.float64))) if len(frame) else 0.0
        self._recent = [*self._recent[1 - GATE_SMOOTH_FRAMES :], power]
        level = 10 * math.log10(max(sum(self._recent) / len(self._recent), 1e-10) / 32768.0**2)
        if self._speech_db is not None and level < self._speech_db - gate:
            # as late as Silero's own silence would come: the cues' waits were measured with it
            self._below += 1
            if self._below == 1 and self.gate_cues:
                gated = self._gated_turn
                self._gate_need = gated.gated_need_s() if gated is not None else None
            return 0.0 if self._below > GATE_LAG_FRAMES else p
        self._below = 0
        self._gate_need = None
        if p >= self.start_threshold:
            self._levels.append(level)
            n = len(self._levels)
            if n >= GATE_MIN_FRAMES and (n <= 64 or n % 8 == 0):
                self._speech_db = float(np.percentile(self._levels, GATE_PERCENTILE))
        return p

    def partial(self, text: str) -> None:
        """The ASR's latest partial text, for the turn detector (nothing without one)."""
        if self.turn is not None:
            self.turn.partial(text)

    def feed(self, frame: Frame) -> SpeechChange | None:
        """The change this frame completes, if any."""
        p = self.probability = self.vad.probability(frame)
        turn = self.turn
        if not self.in_speech:
            self._run = self._run + 1 if p >= self.start_threshold else 0
            if self._run >= self.start_frames:
                self.in_speech, self._run, self._gate_run = True, 0, 0
                self._paused = False
                self._forget_level()
                p = self._gated(frame, p)
                if turn is not None:
                    turn.reset()  # partials of an utterance that ended on nothing go too
                    turn.frame(frame, p)
                return SpeechChange.STARTED
            return None
        # the level gate ends a turn after the hold: a run of frames the VAD calls speech but
        # that lie far below the voice (the room); or, with gate_cues, sooner — the turn's
        # quick end, judged on the speech before the level fell, while the VAD still calls the
        # room speech (babble). The turn detector judges the VAD's own silences: gating its
        # cues cut soft endings, "ste-ps", and 1 s pauses (held-out clean cuts 4.9 % → 9 %)
        gated = self._gated(frame, p)
        self._run = self._run + 1 if p < self.end_threshold else 0
        self._gate_run = self._gate_run + 1 if gated < self.end_threshold else 0
        if turn is not None:
            turn.frame(frame, p)
            over = self._run > 0 and turn.ended(self._run * FRAME_S)
        else:
            over = self._run >= self._end_frames
        run = self._run
        if not over and self.level_gate_db is not None and self._gate_run >= self._hold_frames:
            over, run = True, self._gate_run
        need = self._gate_need
        if (
            not over and need is not None and self._below and self._run == 0
            and self._below * FRAME_S >= need - 1e-9 and self._words_complete()
        ):  # fmt: skip
            # a silence only the gate hears (the VAD still calls the room speech: babble)
            over, run = True, self._below
        if over:
            self._ended_after, self.in_speech, self._run, self._gate_run = run, False, 0, 0
            self._paused = False
            if logger.isEnabledFor(logging.DEBUG):
                why = getattr(turn, "reason", "")
                logger.debug("turn over after %.2f s of silence: %s", run * FRAME_S, why)
            return SpeechChange.ENDED
        return self._early(p) if self.early_s is not None else None

    def _early(self, p: float) -> SpeechChange | None:
        """PAUSED once a silence that has not ended the turn could have (``early_s`` of it, the
        VAD's or only the level gate's, after words that do not promise more); RESUMED when a
        confidently voiced frame at the voice's level follows it."""
        early_s = self.early_s
        assert early_s is not None
        if self._paused:
            if p >= self.start_threshold and self._below == 0:
                self._paused = False
                return SpeechChange.RESUMED
            return None
        turn = self.turn
        if self._run and isinstance(turn, MayEnd):
            ready = turn.may_end(self._run * FRAME_S, early_s)
        elif self._run:
            ready = self._run * FRAME_S >= early_s - 1e-9
        else:  # a silence only the gate hears (babble): only after words that could end it
            words = turn.words_may_end() if isinstance(turn, MayEnd) else self._words_complete()
            ready = self._below * FRAME_S >= early_s - 1e-9 and words
        if not ready:
            return None
        self._paused = True
        if logger.isEnabledFor(logging.DEBUG):
            logger.debug("the turn may be over: %s", getattr(self.turn, "reason", ""))
        return SpeechChange.PAUSED

    @property
    def speaking(self) -> bool:
        """True while the last frame counts as speech (not during the end hangover)."""
        return self.in_speech and self._run == 0
