"""End of turn: has the person finished speaking, or only paused?

A :class:`TurnDetector` sees every frame of an utterance (with the VAD's speech probability) and
the ASR's partial text, and is asked after each frame of silence whether the turn is over.
:class:`~anima.listening.speech_detector.SpeechDetector` consults one when it is given one;
without one it ends speech after its fixed ``end_s``.

- ``silence`` (:class:`SilenceTurn`): the turn ends after ``endpoint_silence_s`` of silence,
  whatever was said (exactly the behaviour before turn detectors: 0.8 s by default).
- ``cues`` (:class:`~anima.listening.turn.cues.CuesTurn`, and ``auto``): the silence needed
  depends on what the speech says — a short one after a complete request whose pitch falls, a
  long one after "and", "the", "um"…, the endpoint silence otherwise. See its module.

``listen.turn`` names one (``registry.TURNS``); :func:`turn_for` builds it from a
:class:`~anima.config.listening.ListenConfig` (``turn_quick_s``, ``turn_hold_s``,
``endpoint_silence_s``).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from anima.audio import FRAME_S, Frame
from anima.errors import ConfigError

if TYPE_CHECKING:
    from anima.config.listening import ListenConfig


@runtime_checkable
class TurnDetector(Protocol):
    """Decides when a pause ends the turn; one utterance at a time."""

    name: str

    def load(self) -> None:
        """Load what it needs (may take a moment); raises when it is unavailable."""
        ...

    def reset(self) -> None:
        """A new utterance begins."""
        ...

    def frame(self, frame: Frame, speech_prob: float) -> None:
        """Every frame of the utterance, speech and pauses alike, with the VAD's probability."""
        ...

    def partial(self, text: str) -> None:
        """The ASR's latest partial text of this utterance (any time; maybe never)."""
        ...

    def ended(self, silence_s: float) -> bool:
        """After ``silence_s`` of silence (asked after each non-speech frame): is the turn over?"""
        ...


@runtime_checkable
class GatedTurn(TurnDetector, Protocol):
    """A turn detector that also rules the level gate
    (:class:`~anima.listening.speech_detector.SpeechDetector` asks it,
    :class:`~anima.listening.turn.cues.CuesTurn` is one): frames ``level_gate_db`` below the
    utterance's voice are the room's (babble the VAD calls speech)."""

    level_gate_db: float | None  # None: no gate
    hold_s: float  # the longest silence it waits: a silence only the gate hears ends after it
    gate_cues: bool  # such a silence may end sooner, as the cues say (gated_need_s)

    def words_complete(self) -> bool:
        """The newest words could be a whole request (a gated silence may end the turn)."""
        ...

    def gated_need_s(self) -> float | None:
        """The silence the turn needs, judged as the level falls; None: the gate's hold."""
        ...


@runtime_checkable
class MayEnd(Protocol):
    """A turn detector that can tell a pause that could end the turn before its own end
    (:class:`~anima.listening.turn.cues.CuesTurn`): for the early reply of full duplex
    (:attr:`~anima.listening.speech_detector.SpeechDetector.early_s`), taken back if the
    person goes on."""

    def may_end(self, silence_s: float, early_s: float) -> bool:
        """After ``silence_s`` of the VAD's silence: could the turn be over, ``early_s`` into
        it (the words so far do not promise more)?"""
        ...

    def words_may_end(self) -> bool:
        """The newest words could end the turn: asked of a silence only the level gate hears."""
        ...


def silence_frames(seconds: float) -> int:
    """Whole frames that make up ``seconds`` of silence (at least one)."""
    return max(1, math.ceil(seconds / FRAME_S - 1e-9))


class SilenceTurn:
    """The turn ends after a fixed silence, whatever was said (the behaviour before cues)."""

    name = "silence"

    def __init__(self, end_s: float = 0.8) -> None:
        if not (math.isfinite(end_s) and end_s > 0):
            raise ConfigError(f"turn: the silence must be > 0 seconds, got {end_s!r}")
        self.end_s = end_s
        self._frames = silence_frames(end_s)

    def load(self) -> None:
        """Nothing to load."""

    def reset(self) -> None:
        """Nothing to forget."""

    def frame(self, frame: Frame, speech_prob: float) -> None:
        """Frames do not matter."""

    def partial(self, text: str) -> None:
        """Words do not matter."""

    def ended(self, silence_s: float) -> bool:
        # counted in whole frames, as SpeechDetector's own end_s is: both end on the same frame
        return silence_s >= self._frames * FRAME_S - 1e-9


QUICK_S = 0.25  # the silence after a falling, complete request (listen.turn_quick_s)
HOLD_S = 1.2  # the silence after anything else that has a voice (listen.turn_hold_s)


def make_turn(
    kind: str,
    *,
    endpoint_s: float = 0.8,
    quick_s: float = QUICK_S,
    hold_s: float = HOLD_S,
    speech_threshold: float = 0.35,
    level_gate_db: float | None = 12.0,
    gate: str = "cues",
) -> TurnDetector:
    """A turn detector of ``kind`` (a name of ``registry.TURNS``) with these silences:
    ``silence`` waits ``endpoint_s``; ``cues`` (and ``auto``) ``quick_s``, ``hold_s``, or
    ``endpoint_s`` when it has no pitch to judge (see :mod:`anima.listening.turn.cues`), with
    ``speech_threshold`` the VAD probability that counts as speech (``vad_end_threshold``) and
    ``level_gate_db`` how far below the speech's level a frame is the room's, not the person's
    (``None``: no gate; ``silence`` has none, so its behaviour is the one before), and ``gate``
    how a silence only the gate hears ends the turn (``listen.turn_gate``: ``hold`` waits
    ``hold_s``, ``cues`` ends it ``quick_s`` after a fall, as the VAD's silences)."""
    from anima.listening.registry import TURNS

    made: TurnDetector = TURNS.load(kind)(
        endpoint_s=endpoint_s, quick_s=quick_s, hold_s=hold_s,
        speech_threshold=speech_threshold, level_gate_db=level_gate_db, gate=gate,
    )  # fmt: skip
    return made


def silence_turn(*, endpoint_s: float, **_others: object) -> TurnDetector:
    """``listen.turn: silence``: ``endpoint_s`` of silence, whatever was said (the cues'
    settings mean nothing to it)."""
    return SilenceTurn(endpoint_s)


def turn_for(config: ListenConfig) -> TurnDetector:
    """The turn detector a listening config names, with its silences (with full duplex's
    early reply, the confirming end's: :meth:`ListenConfig.turn_silences`)."""
    quick_s, endpoint_s = config.turn_silences()
    return make_turn(
        config.turn, endpoint_s=endpoint_s, quick_s=quick_s, hold_s=config.turn_hold_s,
        speech_threshold=config.vad_end_threshold, gate=config.turn_gate,
        level_gate_db=config.turn_gate_db,
    )  # fmt: skip
