"""The seams of speech: TTS engines, audio sinks, and what flows between them.

A :class:`TTSEngine` turns text into a stream of :class:`AudioChunk` s, each carrying the phonemes
(or visemes) it contains with their sample offsets, so lips can follow the audio exactly, and
where each word starts, so gestures can be timed to words. An
:class:`AudioSink` plays samples and reports its *playback clock* — how many samples have
actually been played — which is what lips and sway are read against, never the wall clock.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

import numpy as np
from numpy.typing import NDArray

Samples = NDArray[np.int16]  # mono PCM


@dataclass(frozen=True)
class PhonemeMark:
    """A phoneme (IPA, or an engine's own symbol) starting ``offset`` samples into the utterance."""

    phoneme: str
    offset: int


@dataclass(frozen=True)
class VisemeMark:
    """An engine-provided viseme id (Azure's 0–21) starting ``offset`` samples in."""

    viseme: int
    offset: int


@dataclass(frozen=True)
class WordMark:
    """A spoken word starting ``offset`` samples in: the word of the text given to
    ``synthesize`` that begins at character ``char`` (what annotated speech is timed by)."""

    char: int
    offset: int


@dataclass(frozen=True)
class AudioChunk:
    """A piece of an utterance: its samples and the marks that fall inside it.

    Offsets in marks count from the start of the whole utterance, not of the chunk.
    """

    samples: Samples
    sample_rate: int
    phonemes: tuple[PhonemeMark, ...] = ()
    visemes: tuple[VisemeMark, ...] = ()
    words: tuple[WordMark, ...] = ()  # empty: the engine gives no word timing


@dataclass
class Cancel:
    """A cancellation flag shared by the speech service and an engine's synthesis."""

    _event: threading.Event = field(default_factory=threading.Event)

    def set(self) -> None:
        self._event.set()

    @property
    def is_set(self) -> bool:
        return self._event.is_set()


@runtime_checkable
class TTSEngine(Protocol):
    """Text to audio with timing marks. Constructors load nothing heavy; ``load()`` does."""

    name: str

    def load(self) -> None:
        """Load voices and libraries (may take a second); called once, off the motion thread."""
        ...

    def supports(self, locale: str) -> bool:
        """True when the engine has a voice for ``locale`` (e.g. ``en-US``, ``de-DE``)."""
        ...

    def synthesize(self, text: str, locale: str, cancel: Cancel) -> Iterator[AudioChunk]:
        """Yield chunks as soon as they exist; stop early once ``cancel`` is set.

        Raises :class:`anima.errors.SpeechError` when synthesis fails.
        """
        ...


@runtime_checkable
class PreparesAhead(Protocol):
    """A capability a :class:`TTSEngine` may add: synthesize a text before it is said, into the
    engine's own cache, so saying it later starts at once (Piper has it; eSpeak NG, at ~5 ms a
    clause, needs none). The speech service prepares through it when nothing waits to be said."""

    def prepare(self, text: str, locale: str = "en-US") -> int:
        """Synthesize ``text`` into the cache (nothing is played); how many pieces were newly
        kept (0 when the engine has no voice for ``locale``)."""
        ...


@runtime_checkable
class AudioSink(Protocol):
    """Plays mono int16 audio and tells how much of it has really been played."""

    name: str

    def start(self, sample_rate: int) -> None:
        """Begin an utterance at this rate; the playback clock restarts at 0."""
        ...

    def write(self, samples: Samples) -> None:
        """Queue samples for playback (may block briefly to pace a real device)."""
        ...

    def played(self) -> int:
        """Samples of the current utterance played so far (the playback clock)."""
        ...

    def written(self) -> int:
        """Samples of the current utterance queued so far."""
        ...

    def stop(self) -> None:
        """Silence now: drop everything not yet played; the clock freezes."""
        ...

    def close(self) -> None: ...
