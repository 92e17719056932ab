"""Wake phrase spotting on the ASR: the phrase must open a stretch of speech.

:class:`AsrSpotter` runs its own VAD on every frame. When a stretch of speech ends (``gap_s`` of
silence) or has lasted ``window_s``, a :class:`Reader` (Whisper tiny.en,
:class:`~anima.listening.whisper.reader.WhisperReader`) scores the phrase at its start: the
probability of the phrase's words forced at the opening of the transcript, read four ways and
combined by a logistic model. The stretch wakes the robot when that is at least
``min_probability``. Between ``second_look`` and ``min_probability`` (the grey zone, where
Piper's joe in faint white noise fell) the stretch's first words are read freely once more, and
it wakes when they are the phrase standing alone (:func:`opening_is_phrase`: "A robot." for
"hey robot", never "hey Robert" or "a robot is standing…"). Each stretch is read once: the
rest of a long one costs nothing.

The hit says where the phrase ended (the alignment of Whisper's words on the audio), so the
recorder records from there: "hey robot, wave" in one breath becomes the request "wave".
Stretches are read on the caller's thread; a reading of 2 s takes ~100-200 ms (CTranslate2
releases the GIL), so the recorder's frames wait in the listener's queue meanwhile; a second
look adds one greedy decode (~30-60 ms: the encoding is reused).
"""

from __future__ import annotations

import collections
import logging
import math
import re
from collections.abc import Iterable, Sequence
from typing import Protocol

import numpy as np
from numpy.typing import NDArray

from anima.audio import FRAME_SAMPLES, SAMPLE_RATE, Frame
from anima.errors import ConfigError
from anima.listening.asr import normalize
from anima.listening.speech_detector import SpeechChange, SpeechDetector
from anima.listening.vad import Vad, load_vad
from anima.listening.vad_gate import VAD_GATE_DB
from anima.listening.wake.spotter import WakeHit
from anima.listening.whisper.reader import PhraseScore, WhisperReader
from anima.logtext import quoted

logger = logging.getLogger(__name__)

PRE_S = 0.25  # audio kept before the VAD's onset, so the phrase's first sound is whole
SEEK_S = 0.25  # how far past the aligned end of the phrase its real end is looked for
# the reader's probability that wakes (its logistic model's): 0.5 gave 175 of 180 wake
# utterances and 7 of 210 near misses over 15 voices and 3 noises; 0.6 gave 171 and 6
MIN_PROBABILITY = 0.5
# below MIN_PROBABILITY but at least this, the stretch gets a second look: a free reading of its
# first words (:func:`opening_is_phrase`). Piper's joe in faint white noise scored 0.1-0.5
SECOND_LOOK = 0.1
# level onsets (LevelOnsets), in 32 ms frames
FLOOR_S = 2.0
FLOOR_FRAMES = round(FLOOR_S * SAMPLE_RATE / FRAME_SAMPLES)
MIN_FLOOR = 10  # frames before the room's level is known
ONSET_DB = 9.0
# the room's level is steady: 80th and 20th percentile this close. Six-talker babble spread
# 5-6 dB over 2 s, one person talking 14-22 dB (so a voice's own loud words start nothing)
STEADY_DB = 10.0
ONSET_FRAMES = 3
QUIET_DB = 4.0
REARM_S = 1.0
REARM_FRAMES = round(REARM_S * SAMPLE_RATE / FRAME_SAMPLES)
# a stretch that was not the phrase is logged with its first words, read freely for the log at
# most once per this many seconds of audio (a reading costs ~30-200 ms on two cores)
MISSED_READING_S = 10.0
_SPOKEN = re.compile(r"[\w']+|[^\w\s']")  # a free reading's words and punctuation marks
_BREAKS = frozenset(".,!?;:")


class Reader(Protocol):
    """Scores the wake phrase at the start of a stretch of speech (16 kHz floats in [-1, 1])."""

    name: str

    def load(self) -> None: ...

    def close(self) -> None: ...

    def score(self, audio: NDArray[np.float32]) -> PhraseScore: ...

    def opening(self, audio: NDArray[np.float32]) -> str:
        """The stretch's first words as heard freely (nothing forced)."""
        ...


def opening_is_phrase(heard: str, phrase: str) -> bool:
    """The second look's rule: the free reading's words at the phrase's places end with the
    phrase's last word, exactly, each word before it is the phrase's own or a word of at most
    three letters, and the phrase stands alone: the reading ends there or breaks (a comma, a
    full stop). Piper's "hey robot" is heard as "A robot.", eSpeak's as "K robot, wave";
    "hey Robert", "a robot is standing in the hall" and "the robot waved" are not the phrase,
    and a one-word phrase must be heard as itself."""
    want = phrase.split()
    tokens = _SPOKEN.findall(heard.lower())
    words = [i for i, t in enumerate(tokens) if t[0].isalnum() or t[0] == "'"]
    if len(words) < len(want):
        return False
    got = [normalize(tokens[i]) for i in words[: len(want)]]
    after = words[len(want) - 1] + 1
    if got[-1] != want[-1] or (after < len(tokens) and tokens[after] not in _BREAKS):
        return False
    return all(g == w or len(g) <= 3 for g, w in zip(got, want[:-1], strict=False))


class AsrSpotter:
    """The wake phrase at the start of a stretch of speech, read by an ASR (module docstring)."""

    name = "asr"

    def __init__(
        self,
        phrase: str = "hey robot",
        *,
        reader: Reader | None = None,
        vad: Vad | None = None,
        window_s: float = 2.0,
        gap_s: float = 0.3,
        min_probability: float = MIN_PROBABILITY,
        second_look: float = SECOND_LOOK,
        vad_gate_db: float | None = VAD_GATE_DB,
    ) -> None:
        self.phrase = normalize(phrase)
        self._vad_gate_db = vad_gate_db  # listen.vad_gate_db, for the VAD it loads
        if not self.phrase:
            raise ConfigError(f"listen.wake_phrase: no words in {phrase!r}")
        self.reader: Reader = reader or WhisperReader(phrase)
        self._vad = vad
        self.window = round(window_s * SAMPLE_RATE)
        self.gap_s = gap_s
        self.min_probability = min_probability
        self.second_look = second_look
        self.second_looks = 0  # free readings made (for benchmarks)
        self.readings = 0  # stretches read so far (for benchmarks: the cost is per reading)
        self.last: PhraseScore | None = None  # the last score (for logs and benchmarks)
        self._detector: SpeechDetector | None = None
        self._before: collections.deque[Frame] = collections.deque()
        self._stretch: list[Frame] = []
        self._start = 0  # stream position of the stretch's first kept sample
        self._length = 0  # samples in the stretch so far
        self._read = False  # this stretch has been read (the rest of it is ignored)
        self._level = LevelOnsets()
        self._by_level = False  # the stretch began at a rise in level, not at the VAD's onset
        self._quiet_run = 0  # frames in a row back at the room's level (a stretch by level)
        self._gap_frames = max(1, math.ceil(gap_s * SAMPLE_RATE / FRAME_SAMPLES))  # as the VAD
        self._next = -1  # the position the next frame should have; -1: nothing fed yet
        self._opening: str | None = None  # the last stretch's free reading (a second look's)
        self._missed_read_at = -math.inf  # where the last free reading for the log was made

    def load(self) -> None:
        if self._detector is None:
            vad = self._vad = self._vad or load_vad("auto", gate_db=self._vad_gate_db)
            vad.load()
            self._detector = SpeechDetector(vad, end_s=self.gap_s)
        self.reader.load()

    def close(self) -> None:
        self.reader.close()
        self.reset()

    def reset(self) -> None:
        if self._detector is not None:
            self._detector.reset()
        self._before.clear()
        self._level.reset()
        self._stretch, self._length, self._read, self._next = [], 0, False, -1
        self._by_level, self._quiet_run = False, 0

    def feed(self, frame: Frame, position: int) -> WakeHit | None:
        self.load()
        detector = self._detector
        assert detector is not None
        if position != self._next:
            self.reset()
        self._next = position + len(frame)
        in_stretch = detector.in_speech
        change = detector.feed(frame)
        onset, quiet = self._level.feed(frame)
        louder = in_stretch and self._read and onset and change is not SpeechChange.ENDED
        if (not in_stretch and change is SpeechChange.STARTED) or louder:
            # a stretch begins where the VAD heard speech begin, or, in a noise that never
            # stops (babble: the VAD hears speech throughout), where a voice rose above it
            self._stretch = [*self._before, frame]
            self._length = sum(len(f) for f in self._stretch)
            self._start = self._next - self._length
            self._read, self._by_level, self._quiet_run = False, louder, 0
        elif not in_stretch:
            self._keep_before(frame)
            return None
        elif not self._read:
            self._stretch.append(frame)
            self._length += len(frame)
            self._quiet_run = self._quiet_run + 1 if quiet else 0
        ended = change is SpeechChange.ENDED or (
            self._by_level and self._quiet_run >= self._gap_frames
        )
        hit = None
        if not self._read and (ended or self._length >= self.window):
            self._read = True
            hit = self._decide(np.concatenate(self._stretch), self._next)
            self._stretch = []
        if change is SpeechChange.ENDED:
            self._before.clear()  # the next stretch keeps nothing of this one
        else:
            self._keep_before(frame)  # the audio before a later onset (by level)
        return hit

    def _keep_before(self, frame: Frame) -> None:
        self._before.append(frame)
        while len(self._before) > 1 and sum(map(len, self._before)) > PRE_S * SAMPLE_RATE:
            self._before.popleft()

    def _decide(self, samples: Frame, detected: int) -> WakeHit | None:
        """Score the phrase on the stretch's first ``window_s``; a hit when it is there."""
        clip = samples[: self.window]
        audio = clip.astype(np.float32) / 32768.0
        score = self.reader.score(audio)
        self.readings += 1
        self.last = score
        self._opening = None
        if score.probability < self.min_probability and not self._looks_again(audio, score):
            self._say_missed(audio, score, detected)
            return None
        end = self._start + _quiet_after(clip, round(score.end_s * SAMPLE_RATE))
        logger.debug(
            "wake phrase heard (score %.2f) in the speech at %.2f s, ending at %.2f s",
            score.probability, self._start / SAMPLE_RATE, min(end, detected) / SAMPLE_RATE,
        )  # fmt: skip
        return WakeHit(
            phrase=self.phrase, end_sample=min(end, detected), detected_sample=detected,
            confidence=score.probability,
        )  # fmt: skip

    def _looks_again(self, audio: NDArray[np.float32], score: PhraseScore) -> bool:
        """In the grey zone, the phrase is there when the free reading opens with it."""
        if not self.second_look <= score.probability < self.min_probability:
            return False
        self.second_looks += 1
        heard = self._opening = self.reader.opening(audio)  # the encoding of score() is reused
        found = opening_is_phrase(heard, self.phrase)
        logger.debug(
            "wake: second look at %.2f heard %s: %s", score.probability, quoted(heard), found
        )
        return found

    def _say_missed(self, audio: NDArray[np.float32], score: PhraseScore, detected: int) -> None:
        """Log (INFO) that a stretch of speech was not the phrase, with its first words as
        heard freely: the second look's, or a free reading made for the log (~30-200 ms, so at
        most one per :data:`MISSED_READING_S` of audio; the others say how long they were)."""
        if not logger.isEnabledFor(logging.INFO):
            return
        heard = self._opening
        since = abs(detected - self._missed_read_at)  # a new stream starts again at 0
        if heard is None and since >= MISSED_READING_S * SAMPLE_RATE:
            heard = self.reader.opening(audio)
            self._missed_read_at = detected
        where = f"at {self._start / SAMPLE_RATE:.2f} s"
        if heard is not None and heard.strip():
            logger.info(
                "no wake phrase heard in %s %s (score %.2f < %.2f)",
                quoted(heard.strip()), where, score.probability, self.min_probability,
            )  # fmt: skip
        else:
            logger.info(
                "no wake phrase heard in %.1f s of speech %s (score %.2f < %.2f)",
                len(audio) / SAMPLE_RATE, where, score.probability, self.min_probability,
            )  # fmt: skip


class LevelOnsets:
    """Where a voice rises above a noise that never stops. The room's level is the 20th
    percentile of the last :data:`FLOOR_S` of frame levels, when they are steady
    (:data:`STEADY_DB`); an onset is :data:`ONSET_FRAMES` frames in a row :data:`ONSET_DB`
    above it (then none for :data:`REARM_S`), and a frame
    within :data:`QUIET_DB` of the level it had at the onset is quiet. In six-talker babble at
    −15 dB Silero's VAD calls everything speech, so without this a stretch never ended and the
    wake phrase said into it was never read (0 of 16 in the conversation bench's babble room)."""

    def __init__(self) -> None:
        self._levels: collections.deque[float] = collections.deque(maxlen=FLOOR_FRAMES)
        self._above = 0
        self._since = REARM_FRAMES  # frames since the last onset
        self._onset_floor = -math.inf

    def reset(self) -> None:
        self._levels.clear()
        self._above, self._since, self._onset_floor = 0, REARM_FRAMES, -math.inf

    def feed(self, frame: Frame) -> tuple[bool, bool]:
        """(an onset at this frame, this frame is quiet)."""
        level = _dbfs(frame)
        floor = None
        if len(self._levels) >= MIN_FLOOR:
            low, high = percentiles(self._levels, (20.0, 80.0))
            if high - low <= STEADY_DB:  # a steady noise, not a voice's own ups and downs
                floor = float(low)
        self._levels.append(level)
        self._since += 1
        self._above = self._above + 1 if floor is not None and level > floor + ONSET_DB else 0
        onset = self._above == ONSET_FRAMES and self._since >= REARM_FRAMES
        if onset:
            assert floor is not None
            self._since, self._onset_floor = 0, floor
        return onset, level < self._onset_floor + QUIET_DB


def percentiles(values: Iterable[float], qs: Sequence[float]) -> list[float]:
    """``np.percentile(values, qs)`` (linear, the same floats) for a few dozen values, in a
    tenth of its time: it ran on every 32 ms frame, ~0.3 ms of the listener's ~0.5 ms in a quiet
    room, most of it NumPy's own Python around a 62-value sort."""
    ordered = sorted(values)
    last = len(ordered) - 1
    out = []
    for q in qs:
        position = q / 100.0 * last
        below = math.floor(position)
        above = min(below + 1, last)
        t = position - below
        a, b = ordered[below], ordered[above]
        # NumPy's _lerp: from the nearer end, so t = 1 gives b exactly
        out.append(b - (b - a) * (1.0 - t) if t >= 0.5 else a + (b - a) * t)
    return out


def _dbfs(frame: Frame) -> float:
    rms = float(np.sqrt(np.mean(frame.astype(np.float64) ** 2))) if len(frame) else 0.0
    return 20 * math.log10(rms / 32768.0 + 1e-9)


def _quiet_after(samples: Frame, end: int) -> int:
    """The quietest 20 ms from just before ``end`` to ``SEEK_S`` after it: the alignment puts
    the phrase's end up to ~0.2 s early, and a cut there would leave its last sound ("bot")
    at the start of the command."""
    step = SAMPLE_RATE // 100
    begin = max(0, end - 5 * step)
    stop = min(len(samples), end + round(SEEK_S * SAMPLE_RATE))
    if stop - begin < 2 * step:
        return min(end, len(samples))
    window = samples[begin:stop].astype(np.float64) ** 2
    energy = np.convolve(window, np.ones(2 * step), mode="valid")[::step]
    at_end = energy[min(len(energy) - 1, (end - begin) // step)]
    if energy.min() >= 0.5 * at_end:  # no quieter place near: the alignment's end stands
        return min(end, len(samples))
    return begin + int(np.argmin(energy)) * step + step
