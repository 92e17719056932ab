"""The voice-direction estimator: every 32 ms frame of all the array's channels in, a
:class:`~anima.listening.direction.types.VoiceDirection` out while someone speaks.

Each frame joins a short window (``window_frames``, 4 by default: 128 ms), over which
:class:`~anima.listening.direction.gcc_phat.PairDelays` finds each wide pair's delay and
:class:`~anima.listening.direction.gcc_phat.ArrayGeometry` the direction. Two gates decide what
is handed on:

- **speech**: nothing is handed on for a frame that is not speech: the VAD result the caller
  gives with the frame (the listener's), else the estimator's own VAD (``vad``) on the
  channels' mean, else an energy gate (:class:`~anima.listening.vad.EnergyVad`);
- **onsets** (the precedence effect): an estimate is handed on only when its last frame is at
  least ``onset_db`` (:data:`ONSET_DB`) louder than the quietest of the ``ONSET_FRAMES`` before
  it: a sound's direct path reaches the array first and its reflections pile up after, so a
  window where the sound is rising holds more of the direct path. In a room the reflections
  pull the estimates toward the array's broadside, most near a line's ends (a talker at 70°
  on the line was heard at 35–50°, at 57° from its onsets); measured on the bench's rooms
  (line array, RT60 0.3 s): median error 5.2° → 4.5°, p90 22° → 20.5° at SNR 10 dB, and
  28° → 19° at 20 dB, with about half the estimates; ``onset_db`` 0 hands on every window;
- **the robot's own voice** (:class:`~anima.listening.direction.own_voice.OwnVoiceGate`): while
  the robot's loudspeaker plays (its reference louder than ``PLAYING_RMS`` over the frame, or
  the caller's ``robot_speaking``) and for ``OWN_HOLD_S`` after (the room's reverberation of
  it), every estimate is ``own_voice=True``: never a turn target. A barge-in
  (:meth:`DirectionEstimator.barge_in`: the listener heard a person over the robot) lifts that
  until the robot has fallen silent.

The confidence is the whitened correlation's peak height, averaged over the pairs: near 1 for
one talker in a dry room, lower with reverberation, noise or two voices at once.

**Onsets together.** One 128 ms window at SNR 10 dB often has too weak a peak to trust (about
half of the onsets of a talker in the bench's room are under ``min_confidence``). So the
whitened cross spectra of the windows the gates pass are also summed, each older one weighed
down by ``exp(−age / accumulate_s)`` (:data:`ACCUMULATE_S`, 0.3 s: a talker's last few
onsets, and nothing of one who spoke before a pause): the direction is first read from that sum
when its peak reaches ``accumulated_confidence`` (:data:`ACCUMULATED_CONFIDENCE`), else from
the window alone when its own reaches ``min_confidence`` (:data:`MIN_CONFIDENCE`, as before the
sum: a new talker's first onset, whose sum still carries someone else's), else nothing is
handed on. A window sure on its own (``accumulated_confidence``) more than
:data:`NEW_TALKER_RAD` (20°) from the sum is someone new taking over without a pause: the sum
starts over from it. Measured on the DOA bench's rooms (4-microphone line, dev / held-out
directions): at RT60 0.3 s and SNR 10 dB, 153 → 341 / 137 → 306 estimates, the median error
4.5 → 6.5° / 5.1 → 3.3°, the p90 20.5 → 21.0° / 16.8 → 12.0°; at SNR 20 dB the p90
18.9 → 10.7° / 16.8 → 9.8°; the 6 cm square's p90 10.2 → 4.8° / 10.2 → 5.5° at SNR 10 dB.
With the line on the head (Reachy Mini's), a new talker at 70–85° is turned toward in
255–481 ms (925–1251 ms with each window alone; docs/attention.md, *Turning toward a new
speaker*). ``accumulate_s`` 0: each window alone.
"""

from __future__ import annotations

import collections
import logging
import math
import threading
from collections.abc import Callable, Sequence

import numpy as np
from numpy.typing import NDArray

from anima.audio import FRAME_S, FRAME_SAMPLES, Frame
from anima.errors import EngineStateError
from anima.listening.direction.gcc_phat import ArrayGeometry, Mic, PairDelays
from anima.listening.direction.own_voice import OwnVoiceGate
from anima.listening.direction.types import VoiceDirection
from anima.listening.vad import EnergyVad, Vad
from anima.speech.reference import ReferenceReader

logger = logging.getLogger(__name__)

# frames per estimate (128 ms): long enough for a sharp peak, short enough to follow a talker
WINDOW_FRAMES = 4
# estimates whose mean correlation peak is lower are dropped: in reverberant rooms those frames
# are the room's reflections, not the talker (measured on the bench's dev rooms, RT60 0.3 and
# 0.6 s, SNR 10 dB: median error 8.8° → 4.4° and 13.7° → 7.0°, about half the frames kept)
MIN_CONFIDENCE = 0.16
BAND_HZ = (100.0, 7000.0)  # speech's band: below it room modes, above it the anti-alias roll-off
SPEECH_PROBABILITY = 0.5  # the estimator's own VAD: a frame at or above this is speech
ACCUMULATE_S = 0.3  # the onsets' summed cross spectra forget with this time constant (s)
ACCUMULATED_CONFIDENCE = 0.22  # the sum's peak at or above this: its direction is handed on
# a window sure on its own (accumulated_confidence) this far from the sum's direction is a new
# talker: the sum starts over from it (a person who takes over without a pause)
NEW_TALKER_RAD = math.radians(20.0)
ONSET_DB = 3.0  # an estimate's last frame this much louder than the quietest of …
ONSET_FRAMES = 3  # … the frames before it (96 ms): a rising sound (see the module docstring)

MultiFrame = NDArray[np.int16]  # FRAME_SAMPLES × channels, int16 at 16 kHz


class DirectionEstimator:
    """Frames of the array in (:meth:`frame`), directions out to ``on_direction`` (see the
    module docstring). One thread calls :meth:`frame`; :meth:`barge_in` may come from another.

    ``mics``: the array (``listen.mics``); ``reference``: a reader of the robot's playback
    (None: the robot is silent unless the caller says otherwise per frame); ``vad``: a loaded
    VAD run on the channels' mean when the caller gives no speech flag (None: an energy gate);
    ``on_head``: the array turns with the head (``listen.mics_mount: head``): its directions
    are handed on in the head's frame (:attr:`VoiceDirection.on_head`).
    """

    def __init__(
        self,
        mics: Sequence[Mic] | ArrayGeometry,
        on_direction: Callable[[VoiceDirection], None] | None = None,
        *,
        window_frames: int = WINDOW_FRAMES,
        band_hz: tuple[float, float] = BAND_HZ,
        vad: Vad | None = None,
        reference: ReferenceReader | None = None,
        min_confidence: float = MIN_CONFIDENCE,
        onset_db: float = ONSET_DB,
        on_head: bool = False,
        accumulate_s: float = ACCUMULATE_S,
        accumulated_confidence: float = ACCUMULATED_CONFIDENCE,
    ) -> None:
        if not 1 <= window_frames <= 16:
            raise ValueError(f"window_frames must be 1-16, got {window_frames}")
        if not 0.0 <= onset_db <= 40.0:
            raise ValueError(f"onset_db must be 0-40 dB, got {onset_db}")
        if not 0.0 <= accumulate_s <= 10.0:
            raise ValueError(f"accumulate_s must be 0-10 s, got {accumulate_s}")
        self.geometry = mics if isinstance(mics, ArrayGeometry) else ArrayGeometry(list(mics))
        self.channels = len(self.geometry.positions)
        self.on_direction = on_direction
        self.window_frames = window_frames
        self.min_confidence = min_confidence
        self.onset_db = onset_db
        self.on_head = on_head
        self.accumulate_s = accumulate_s
        self.accumulated_confidence = accumulated_confidence
        self._sum: NDArray[np.complex128] | None = None  # the onsets' whitened cross spectra …
        self._sum_t = -math.inf  # … as of this time
        # each recent frame's level (dB of its mean square over every channel): the onset gate
        self._levels: collections.deque[float] = collections.deque(maxlen=ONSET_FRAMES + 1)
        self._delays = PairDelays(self.geometry, window_frames * FRAME_SAMPLES, band_hz=band_hz)
        self._window: collections.deque[NDArray[np.float64]] = collections.deque(
            maxlen=window_frames
        )
        self._vad: Vad = vad if vad is not None else EnergyVad()
        self.own_voice = OwnVoiceGate(reference)
        self.handed_on = 0  # estimates handed on (own voice included)
        self.targets = 0  # of those, not the robot's own voice

    def barge_in(self) -> None:
        """A person talks over the robot (the listener's barge-in): estimates are theirs, not
        the robot's, until the robot falls silent."""
        self.own_voice.barge_in()

    def frame(
        self,
        channels: MultiFrame,
        t: float,
        *,
        speech: bool | None = None,
        robot_speaking: bool | None = None,
    ) -> VoiceDirection | None:
        """One frame (:data:`FRAME_SAMPLES` × channels) ending at ``t`` (runtime clock, s).
        ``speech``: the caller's VAD result for it (None: the estimator's own gate);
        ``robot_speaking``: whether the robot's loudspeaker played over it (None: the
        reference says). Returns what was handed on, or None."""
        block = np.asarray(channels)
        if block.shape != (FRAME_SAMPLES, self.channels):
            raise ValueError(
                f"direction: a frame must be {FRAME_SAMPLES} × {self.channels} samples, "
                f"got {block.shape}"
            )
        samples = block.astype(np.float64)
        self._window.append(samples)
        self._levels.append(10.0 * math.log10(float(np.mean(samples * samples)) + 1e-9))
        if robot_speaking is None:
            robot_speaking = self.own_voice.playing(FRAME_SAMPLES)
        self.own_voice.note(t, robot_speaking)
        if speech is None:
            mono: Frame = np.clip(block.mean(axis=1), -32768, 32767).astype(np.int16)
            speech = self._vad.probability(mono) >= SPEECH_PROBABILITY
        if not speech or len(self._window) < self.window_frames or not self._rising():
            return None
        estimate = self._read(np.concatenate(list(self._window)), t)
        if estimate is None:
            return None
        own = self.own_voice.own(t)
        direction = VoiceDirection(
            t=t, azimuth=estimate.azimuth, elevation=estimate.elevation,
            confidence=estimate.confidence, speech=True, own_voice=own, on_head=self.on_head,
            span_s=self.window_frames * FRAME_S,
        )  # fmt: skip
        self.handed_on += 1
        self.targets += not own
        if self.on_direction is not None:
            self.on_direction(direction)
        return direction

    def _read(self, window: NDArray[np.float64], t: float) -> VoiceDirection | None:
        """The direction of the onsets together, else of this window alone, else None (see
        the module docstring, *Onsets together*)."""
        whitened = self._delays.whitened(window)
        alone = self._direction(whitened, t)
        if self.accumulate_s > 0.0:
            if self._sum is None:
                self._sum = whitened
            else:
                age = max(0.0, t - self._sum_t)  # a caller's clock that went back: no growth
                self._sum = self._sum * math.exp(-age / self.accumulate_s) + whitened
            self._sum_t = t
            together = self._direction(self._sum, t)
            if (
                alone.confidence >= self.accumulated_confidence
                and _apart(alone, together) > NEW_TALKER_RAD
            ):
                self._sum = whitened  # a sure window elsewhere: someone new, the sum starts over
            elif together.confidence >= self.accumulated_confidence:
                return together
        return alone if alone.confidence >= self.min_confidence else None

    def _direction(self, whitened: NDArray[np.complex128], t: float) -> VoiceDirection:
        pairs = self._delays.delays(whitened)
        delays = np.array([p.delay for p in pairs])
        peaks = np.array([p.peak for p in pairs])
        azimuth, elevation = self.geometry.direction(delays, peaks)
        return VoiceDirection(
            t=t, azimuth=azimuth, elevation=elevation, confidence=float(peaks.mean()),
            speech=True,
        )  # fmt: skip

    def _rising(self) -> bool:
        """Whether the newest frame is ``onset_db`` above the quietest of those before it."""
        if self.onset_db <= 0.0:
            return True
        levels = list(self._levels)
        return len(levels) > 1 and levels[-1] - min(levels[:-1]) >= self.onset_db

    def feed(
        self,
        signal: NDArray[np.int16],
        *,
        start_t: float = 0.0,
        speech: Sequence[bool] | None = None,
        robot_speaking: Sequence[bool] | None = None,
    ) -> list[VoiceDirection]:
        """A whole recording (samples × channels, 16 kHz), frame by frame from ``start_t``:
        what was handed on. ``speech`` / ``robot_speaking``: per frame, as :meth:`frame` takes
        them (None: the estimator's own gates)."""
        out = []
        for k in range(len(signal) // FRAME_SAMPLES):
            frame = signal[k * FRAME_SAMPLES : (k + 1) * FRAME_SAMPLES]
            t = start_t + (k + 1) * FRAME_S
            got = self.frame(
                frame, t, speech=None if speech is None else speech[k],
                robot_speaking=None if robot_speaking is None else robot_speaking[k],
            )  # fmt: skip
            if got is not None:
                out.append(got)
        return out


class DirectionSink:
    """A :class:`~anima.listening.sources.base.MultiFrameSink` feeding an estimator on a thread
    it owns (a source's thread, PortAudio's callback among them, must only enqueue): each
    frame is stamped with ``now()`` (the runtime clock) as it arrives. A queue of
    ``max_frames`` (1 s); when the estimator falls that far behind, the oldest frames go
    (``dropped`` counts them): a direction is only worth something now."""

    def __init__(
        self, estimator: DirectionEstimator, now: Callable[[], float], *, max_frames: int = 32
    ) -> None:
        self.estimator = estimator
        self._now = now
        self._queue: collections.deque[tuple[MultiFrame, float] | None] = collections.deque(
            maxlen=max_frames
        )
        self._ready = threading.Condition()
        self._thread: threading.Thread | None = None
        self.dropped = 0
        self.ended: str | None = None

    def start(self) -> None:
        if self._thread is not None:
            raise EngineStateError("direction sink: already started")
        self._thread = threading.Thread(target=self._run, name="anima-direction", daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 1.0) -> None:
        thread, self._thread = self._thread, None
        if thread is None:
            return
        with self._ready:
            self._queue.clear()
            self._queue.append(None)
            self._ready.notify()
        thread.join(timeout)
        if thread.is_alive():
            logger.warning("direction sink: its thread did not stop within %.1f s", timeout)

    def frame(self, samples: MultiFrame) -> None:
        with self._ready:
            if len(self._queue) == self._queue.maxlen:
                self.dropped += 1
            self._queue.append((samples, self._now()))
            self._ready.notify()

    def end(self, reason: str) -> None:
        self.ended = reason

    def _run(self) -> None:
        while True:
            with self._ready:
                while not self._queue:
                    self._ready.wait()
                item = self._queue.popleft()
            if item is None:
                return
            try:
                self.estimator.frame(*item)
            except Exception:
                logger.exception("direction: a frame failed")


def _apart(a: VoiceDirection, b: VoiceDirection) -> float:
    """The angle between two directions (radians)."""
    cos = math.sin(a.elevation) * math.sin(b.elevation) + math.cos(a.elevation) * math.cos(
        b.elevation
    ) * math.cos(a.azimuth - b.azimuth)
    return math.acos(max(-1.0, min(1.0, cos)))
