"""``listen.turn: cues``: the silence that ends a turn depends on how the speech ended.

Three measured cues, each cheap and explainable:

- **words** (:mod:`~anima.listening.turn.text`): the ASR's partial ends on a word that promises
  more ("and", "the", "to", "um", "could you") → *open*; other words → *complete*; no partial,
  or one older than the last ~0.2 s of speech → nothing known (a recognizer without partials,
  none yet, or one that decodes only at pauses and has not caught up).
- **pitch** (:mod:`~anima.listening.turn.prosody`): the last voiced frames fell to the bottom
  of the utterance's register (≤ −3 st from its median), as a finished request does → *falls
  to the bottom*; only from its top (≤ −3.2 st below its 80th percentile, the one accent of a
  short request such as "nod" or "look at me") → *falls from the top*.
- **silence**: how long the VAD has heard nothing.

The rule, checked as the silence grows:

========================  ====================  ==========================================
words                     pitch                 the turn ends after
========================  ====================  ==========================================
open                      any                   ``hold_s`` of silence (1.2 s)
complete or none          falls to the bottom   ``quick_s`` (0.25 s) since the last voiced
                                                frame, once the VAD hears silence too
complete or none          falls from the top    ``middle_s`` (``endpoint_silence_s``, 0.8 s)
complete or none          does not fall         ``hold_s``
complete or none          too little voicing    ``middle_s``
========================  ====================  ==========================================

Why these rows (measured on the turn-taking set, :mod:`anima.bench.turn.turn`): a pause inside a
sentence often follows words that could end a request ("walk forward … for two seconds"), so
complete words alone cannot end a turn early — on the dev set, a hold of 1.0 s instead of 1.2 s
cut 6–8 % of the takes, 0.9 s 19–21 %. What tells the end apart is the fall: eSpeak's voices end
requests 3–6 semitones below their median pitch and pause mid-sentence within 3. A one-word
request is all one accent, so its median sits in its own fall: from its top it ends at the old
endpoint (0.8 s), not the hold. The quick end counts from the last voiced frame because Silero
VAD reports silence ~0.1 s after the voice stops.

:attr:`CuesTurn.reason` says which row applied last, for logs and benchmarks.

In babble, Silero calls the room speech and no silence would begin: :attr:`CuesTurn.level_gate_db`
(``LEVEL_GATE_DB``, 12 dB) asks :class:`~anima.listening.speech_detector.SpeechDetector` to
count frames that far below the utterance's own voice as silence (see its ``_gated``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from enum import Enum

from anima.audio import FRAME_S, Frame
from anima.errors import ConfigError
from anima.listening.turn.prosody import Ending, ProsodyTracker
from anima.listening.turn.text import TextCue, stranded, text_cue

GRACE_FRAMES = 4  # frames into a pause still looked at (~0.13 s: Silero's lag at speech's end)
STALE_FRAMES = 6  # a partial older than this much speech (~0.2 s) says nothing of its end
FALL_ST = -3.0  # the speech's last voiced pitch this far (semitones) below its median: a fall
TOP_FALL_ST = -3.2  # … or this far below its 80th percentile (a short request's one accent)
GATE_FALL_ST = -3.0  # … the fall a quick end needs when only the level gate hears the silence
LEVEL_GATE_DB = 12.0  # frames this far below the utterance's speech level are the room's


class Fall(Enum):
    """How the voice ended, against the utterance's own register."""

    BOTTOM = "falls to the bottom"  # ≤ FALL_ST below the median: a finished request
    TOP = "falls from the top"  # only ≤ TOP_FALL_ST below the 80th percentile: one accent
    NONE = "does not fall"
    UNKNOWN = "no pitch"  # too little voice to tell


@dataclass(frozen=True, kw_only=True)
class Decision:
    """The silence the turn needs now, and why."""

    silence_s: float
    words: TextCue
    fall: Fall
    ending: Ending | None

    def describe(self) -> str:
        pitch = "unknown" if self.ending is None else self.ending.describe()
        return f"words {self.words.value}, {self.fall.value} ({pitch}): {self.silence_s:.2f} s"


def fall_of(ending: Ending | None, fall_st: float = FALL_ST) -> Fall:
    """How ``ending`` falls (see :class:`Fall`)."""
    if ending is None:
        return Fall.UNKNOWN
    if ending.end_st <= fall_st:
        return Fall.BOTTOM
    if ending.end_st - ending.top_st <= TOP_FALL_ST:
        return Fall.TOP
    return Fall.NONE


class CuesTurn:
    """The turn detector of the module docstring."""

    name = "cues"

    def __init__(
        self,
        *,
        quick_s: float = 0.25,
        middle_s: float = 0.8,
        hold_s: float = 1.2,
        fall_st: float = FALL_ST,
        speech_threshold: float = 0.35,
        level_gate_db: float | None = LEVEL_GATE_DB,
        gate_cues: bool = True,
    ) -> None:
        for key, value in (("quick_s", quick_s), ("middle_s", middle_s), ("hold_s", hold_s)):
            if not (math.isfinite(value) and value > 0):
                raise ConfigError(f"turn: {key} must be > 0 seconds, got {value!r}")
        if quick_s > hold_s:
            raise ConfigError(f"turn: need quick_s ≤ hold_s, got {quick_s:g} > {hold_s:g}")
        self.quick_s = quick_s
        self.middle_s = middle_s
        self.hold_s = hold_s
        self.fall_st = fall_st
        self.gate_fall_st = GATE_FALL_ST  # the fall that ends a silence only the gate hears
        self.speech_threshold = speech_threshold
        # SpeechDetector takes frames this far below the speech's level for silence (babble)
        if level_gate_db is not None and not (math.isfinite(level_gate_db) and level_gate_db > 0):
            raise ConfigError(f"turn: level_gate_db must be > 0 dB, got {level_gate_db!r}")
        self.level_gate_db = level_gate_db
        self.gate_cues = gate_cues  # SpeechDetector asks gated_need_s (listen.turn_gate: cues)
        self._quiet = 0  # frames since the VAD last heard speech
        self._spoken_since_text = 0  # speech frames since the last partial
        self._prosody = ProsodyTracker()
        self._text: str | None = None
        self._decision: Decision | None = None  # for the silence in progress; None: recompute

    def load(self) -> None:
        """Nothing to load (numpy only)."""

    def reset(self) -> None:
        self._prosody.reset()
        self._quiet = 0
        self._spoken_since_text = 0
        self._text = None
        self._decision = None

    def frame(self, frame: Frame, speech_prob: float) -> None:
        # Into a pause, only its first frames are looked at (the voice's last fall may sound
        # there before the VAD's silence); later ones would bring the next word's voiced onset
        # into the tail before the VAD hears it, and judge a pause by one frame of its end.
        self._quiet = 0 if speech_prob >= self.speech_threshold else self._quiet + 1
        if not self._quiet:
            self._spoken_since_text += 1
        if self._quiet > GRACE_FRAMES:
            self._prosody.skip()
            return
        self._prosody.feed(frame)
        self._decision = None

    def partial(self, text: str) -> None:
        self._text = text
        self._spoken_since_text = 0
        self._decision = None

    def decide(self) -> Decision:
        """The silence the turn needs, given what has been heard so far (kept for the rest
        of this silence)."""
        if self._decision is None:
            self._decision = self._judge()
        return self._decision

    def _judge(self) -> Decision:
        # words from before the last stretch of speech do not say how it ended
        stale = self._spoken_since_text > STALE_FRAMES
        words = TextCue.NONE if stale else text_cue(self._text)
        ending = self._prosody.ending()
        fall = fall_of(ending, self.fall_st)
        if words is TextCue.OPEN:
            need = self.hold_s
        elif fall is Fall.BOTTOM:
            need = self.quick_s
        elif fall is Fall.NONE:
            need = self.hold_s
        else:  # a short request's fall from its one accent, or too little voice to tell
            need = self.middle_s
        return Decision(silence_s=need, words=words, fall=fall, ending=ending)

    def ended(self, silence_s: float) -> bool:
        decision = self.decide()
        if decision.fall is Fall.BOTTOM and decision.words is not TextCue.OPEN:
            # the voice's own silence: the VAD's lags it by ~0.1 s, which the quick end saves
            silence_s = max(silence_s, self._prosody.since_voiced_s)
        return silence_s >= decision.silence_s - 1e-9

    def gated_need_s(self) -> float | None:
        """The silence this turn needs judged on the speech so far, for a silence only the
        level gate hears (babble): the quick end after a fall to the bottom with words that do
        not ask for more, else None (the gate's own hold). Not kept: asked as the level falls,
        before the partial of the last words may have come, it must not decide the VAD's own
        silence that follows (kept, it cut Piper's "walk forward and | then turn left" at its
        1 s pause: words "none", the 0.8 s of a fall from the top)."""
        decision = self._judge()
        fall = fall_of(decision.ending, self.gate_fall_st)
        if fall is Fall.BOTTOM and decision.words is not TextCue.OPEN:
            return self.quick_s
        return None

    def may_end(self, silence_s: float, early_s: float) -> bool:
        """``early_s`` into a silence after words that do not promise more (or a question's
        stranded ending: "where are you from"): the turn could be over (module docstring). The
        silence counts from the last voiced frame, as the quick end's does, but never more than
        Silero's lag before the VAD's own (a voice with no pitch found has no last voiced
        frame)."""
        decision = self.decide()
        if decision.words is TextCue.OPEN and not stranded(self._text):
            return False
        since = silence_s
        if decision.ending is not None:
            lag = min(self._prosody.since_voiced_s, silence_s + GRACE_FRAMES * FRAME_S)
            since = max(silence_s, lag)
        return since >= early_s - 1e-9

    def words_complete(self) -> bool:
        """The newest partial, fresh, could be a whole request: what a silence only the level
        gate hears needs before it ends the turn early. Without words yet (the partial lags
        the voice by ~0.3 s) it waits: asked as Piper's level fell in the 1 s pause of "walk
        forward and | then turn left", before "and" had come, it cut the sentence."""
        stale = self._spoken_since_text > STALE_FRAMES
        return not stale and text_cue(self._text) is TextCue.COMPLETE

    def words_may_end(self) -> bool:
        """The newest partial, fresh, could end the turn (:meth:`words_complete`, or a
        question's stranded ending, :func:`~anima.listening.turn.text.stranded`): what a
        silence only the level gate hears needs before the early pause of full duplex."""
        stale = self._spoken_since_text > STALE_FRAMES
        return not stale and (text_cue(self._text) is TextCue.COMPLETE or stranded(self._text))

    @property
    def reason(self) -> str:
        """Why the turn needs the silence it needs (the last decision), for logs."""
        return self.decide().describe()


def cues_turn(
    *,
    endpoint_s: float,
    quick_s: float,
    hold_s: float,
    speech_threshold: float,
    level_gate_db: float | None,
    gate: str,
) -> CuesTurn:
    """``listen.turn: cues`` (and ``auto``): the turn detector of the module docstring with the
    config's silences (``endpoint_s`` when it has no pitch to judge)."""
    return CuesTurn(
        quick_s=quick_s, middle_s=endpoint_s, hold_s=hold_s, speech_threshold=speech_threshold,
        level_gate_db=level_gate_db, gate_cues=gate == "cues",
    )  # fmt: skip
