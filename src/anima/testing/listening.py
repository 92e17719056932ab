"""Fakes of the listening parts (:mod:`anima.listening.registry` lists the kinds): test code that
uses a recognizer, a VAD or an audio source without models, sound cards or files.

Each implements its protocol exactly (``isinstance`` against the ``runtime_checkable`` protocol
holds) and records what it was given, so a test can check what reached it.

- :class:`FakeRecognizer`: hears the texts it is given, one per utterance, with a confidence;
  partials are the text's first words, one more every ``frames_per_word`` frames.
- :class:`FakeVad`: speech where a frame is louder than a level (digital silence is never speech).
- :class:`FakeSource`: delivers given audio as 16 kHz frames, on the caller's thread, then ends.
- :class:`FakeTurn`: ends the turn after a fixed silence, or one per partial text it is told.
- :class:`FakeSpotter`: hears the wake phrase at given stream positions.
"""

from __future__ import annotations

import collections
from collections.abc import Iterable, Mapping, Sequence

import numpy as np
from numpy.typing import NDArray

from anima.audio import FRAME_SAMPLES, Frame, Framer
from anima.errors import EngineStateError
from anima.listening.asr import Reading
from anima.listening.sources import FrameSink
from anima.listening.wake.spotter import WakeHit


class FakeRecognizer:
    """A :class:`~anima.listening.asr.Recognizer` that hears ``texts`` in turn (the last one
    again once they run out), each finished with ``confidence`` (one per text, or one for all;
    None: an engine without confidence) and ``alternatives`` (other readings: one sequence per
    text, or none); :meth:`reread` gives ``rereads[text]`` (what reading ``text`` again with
    hints gives) and notes the hints in :attr:`hinted`."""

    name = "fake"

    def __init__(
        self,
        texts: Sequence[str] = ("wave",),
        *,
        confidence: float | Sequence[float | None] | None = 0.9,
        alternatives: Sequence[Sequence[str]] = (),
        rereads: Mapping[str, Sequence[str]] | None = None,
        frames_per_word: int = 5,
    ) -> None:
        if not texts:
            raise ValueError("fake recognizer: give at least one text")
        if alternatives and len(alternatives) != len(texts):
            raise ValueError("fake recognizer: one sequence of alternatives per text")
        self._alternatives = [tuple(a) for a in alternatives] or [()] * len(texts)
        self.alternatives: tuple[str, ...] = ()
        self.rereads = dict(rereads or {})
        self.hinted: list[tuple[str, tuple[str, ...]]] = []  # (text, hints) per reread
        self.texts = list(texts)
        if isinstance(confidence, Sequence):
            if len(confidence) != len(self.texts):
                raise ValueError("fake recognizer: one confidence per text")
            self._confidences: list[float | None] = list(confidence)
        else:
            self._confidences = [confidence] * len(self.texts)
        self.frames_per_word = frames_per_word
        self.confidence: float | None = None
        self.loaded = False
        self.frames: list[Frame] = []  # every frame fed, all utterances
        self.heard: list[str] = []  # every final returned
        self.tentatives: list[str] = []  # every tentative() reading's text
        self.starts = self.cancels = 0
        self._turn = 0
        self._fed = 0  # frames of the current utterance
        self._partial = ""
        self.in_utterance = False

    def load(self) -> None:
        self.loaded = True

    def start(self) -> None:
        self.starts += 1
        self.in_utterance = True
        self._fed = 0
        self._partial = ""

    def feed(self, frame: Frame) -> str | None:
        if not self.in_utterance:
            self.start()
        self.frames.append(frame)
        self._fed += 1
        words = self._text().split()
        partial = " ".join(words[: self._fed // max(1, self.frames_per_word)])
        if partial == self._partial:
            return None
        self._partial = partial
        return partial

    def finish(self) -> str:
        if not self.in_utterance:
            return ""
        self.in_utterance = False
        text, index = self._text(), min(self._turn, len(self.texts) - 1)
        self.confidence = self._confidences[index]
        self.alternatives = self._alternatives[index]
        self._turn += 1
        self.heard.append(text)
        return text

    def tentative(self) -> Reading:
        """The utterance so far (:class:`~anima.listening.asr.ReadsAhead`): the words of its
        partial, with the text's confidence and alternatives; it goes on."""
        index = min(self._turn, len(self.texts) - 1)
        text = self._partial if self.in_utterance else ""
        self.tentatives.append(text)
        if not text:
            return Reading(text="")
        return Reading(text=text, confidence=self._confidences[index],
                       alternatives=self._alternatives[index])  # fmt: skip

    def reread(self, text: str, hints: Sequence[str]) -> tuple[str, ...]:
        self.hinted.append((text, tuple(hints)))
        return tuple(self.rereads.get(text, ()))

    def cancel(self) -> None:
        self.cancels += 1
        self.in_utterance = False

    def close(self) -> None:
        self.loaded = False

    def _text(self) -> str:
        return self.texts[min(self._turn, len(self.texts) - 1)]


class FakeVad:
    """A :class:`~anima.listening.vad.Vad`: probability 1 for a frame whose loudest sample
    exceeds ``level``, else 0 (or the scripted ``probabilities``, one per frame, then 0)."""

    name = "fake"

    def __init__(self, *, level: int = 1000, probabilities: Iterable[float] | None = None) -> None:
        self.level = level
        self._script = collections.deque(probabilities) if probabilities is not None else None
        self.frames = 0  # frames seen
        self.resets = 0
        self.loaded = False

    def load(self) -> None:
        self.loaded = True

    def reset(self) -> None:
        self.resets += 1

    def probability(self, frame: Frame) -> float:
        if len(frame) != FRAME_SAMPLES:
            raise ValueError(f"fake vad: a frame is {FRAME_SAMPLES} samples, got {len(frame)}")
        self.frames += 1
        if self._script is not None:
            return self._script.popleft() if self._script else 0.0
        return 1.0 if int(np.abs(frame.astype(np.int32)).max()) > self.level else 0.0


class FakeSource:
    """An :class:`~anima.listening.sources.AudioSource` that delivers ``audio`` (16 kHz mono
    int16; the last frame zero-padded) to the sink within :meth:`start`, then ends the stream
    with ``reason`` (``None``: the stream stays open, as a microphone's would)."""

    name = "fake"

    def __init__(self, audio: NDArray[np.int16], *, reason: str | None = "eof") -> None:
        self.audio = np.asarray(audio, dtype=np.int16)
        self.reason = reason
        self.started = self.stopped = 0
        self.delivered = 0  # frames delivered

    def start(self, sink: FrameSink) -> None:
        if self.started > self.stopped:
            raise EngineStateError("fake source: already started")
        self.started += 1
        framer = Framer()
        for frame in [*framer.feed(self.audio), *framer.flush()]:
            sink.frame(frame)
            self.delivered += 1
        if self.reason is not None:
            sink.end(self.reason)

    def stop(self, timeout: float = 1.0) -> None:
        self.stopped += 1


class FakeTurn:
    """A :class:`~anima.listening.turn.detector.TurnDetector` that ends the turn after
    ``silence_s`` of silence, or after ``by_text[text]`` when the last partial was ``text``; it
    records the partials and the silences it was asked about."""

    name = "fake"

    def __init__(self, silence_s: float = 0.8, by_text: dict[str, float] | None = None) -> None:
        self.silence_s = silence_s
        self.by_text = dict(by_text or {})
        self.partials: list[str] = []  # every partial, across utterances
        self.asked: list[float] = []  # the silences ended() was asked about, this utterance
        self.frames = 0  # frames of this utterance
        self.resets = 0
        self.loaded = False
        self._text = ""  # the last partial of this utterance

    def load(self) -> None:
        self.loaded = True

    def reset(self) -> None:
        self.resets += 1
        self.frames = 0
        self.asked.clear()
        self._text = ""

    def frame(self, frame: Frame, speech_prob: float) -> None:
        self.frames += 1

    def partial(self, text: str) -> None:
        self.partials.append(text)
        self._text = text

    def ended(self, silence_s: float) -> bool:
        self.asked.append(silence_s)
        need = self.by_text.get(self._text, self.silence_s)
        return silence_s >= need - 1e-9


class FakeSpotter:
    """A :class:`~anima.listening.wake.spotter.Spotter` that hears the phrase at each stream
    position in ``at`` (reported by the frame holding it), the phrase ending ``before`` samples
    earlier; ``fed`` counts the frames it was given."""

    name = "fake"

    def __init__(self, at: Iterable[int] = (), *, before: int = 0, phrase: str = "hey robot"):
        self.at = sorted(at)
        self.before = before
        self.phrase = phrase
        self.fed = 0
        self.loaded = False
        self.resets = 0

    def load(self) -> None:
        self.loaded = True

    def reset(self) -> None:
        self.resets += 1

    def close(self) -> None:
        self.loaded = False

    def feed(self, frame: Frame, position: int) -> WakeHit | None:
        self.fed += 1
        for at in self.at:
            if position <= at < position + len(frame):
                end = max(0, at - self.before)
                return WakeHit(phrase=self.phrase, end_sample=end, detected_sample=at)
        return None
