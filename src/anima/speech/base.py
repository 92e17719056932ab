"""The seams of speech: TTS engines, audio sinks, and what flows between them.

A :class:`TTSEngine` turns text into a stream of :class:`AudioChunk` s, each carrying the phonemes
(or visemes) it contains with their sample offsets, so lips can follow the audio exactly. An
:class:`AudioSink` plays samples and reports its *playback clock* — how many samples have
actually been played — which is what lips and sway are read against, never the wall clock.

Every engine bounds its own work, whatever text it is given (the speech service bounds text too):
:func:`check_text` refuses more than :data:`MAX_TEXT_CHARS`, and :func:`cut_long` cuts a clause
into pieces of at most :data:`PIECE_CHARS` before it reaches a phonemizer. Piper's phonemizer
(espeak-ng inside its C extension) holds the GIL for a whole call, ~5 µs per character here: a
20,000-character clause froze every other thread, the 100 Hz motion loop included, 110–230 ms;
a 160-character piece holds it under 1 ms.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

import numpy as np
from numpy.typing import NDArray

from anima.errors import SpeechError

Samples = NDArray[np.int16]  # mono PCM

# The most one synthesize() call accepts: ~20 minutes of speech, far more than one reply needs.
MAX_TEXT_CHARS = 20_000
# The most text one phonemizer or synthesis call gets: short enough that no C call holds the GIL
# over a millisecond or so, long enough that a clause is rarely cut (a cut adds a short pause).
PIECE_CHARS = 160

_CLAUSE_END = re.compile(r"[,;:]+[\"'”’)\]]*(?=\s)")  # where a long clause may be cut first


def check_text(engine: str, text: str, limit: int = MAX_TEXT_CHARS) -> None:
    """Refuse text longer than ``limit`` characters with a :class:`SpeechError` that says how
    long it is and quotes its start, before any work or allocation proportional to it."""
    if len(text) > limit:
        raise SpeechError(
            f"{engine}: text too long to speak: {len(text):,} characters, at most {limit:,} "
            f"(it begins {text[:40]!r})"
        )


def cut_long(text: str, limit: int = PIECE_CHARS) -> list[str]:
    """``text`` in pieces of at most ``limit`` characters, in order, whitespace-trimmed.

    A piece ends after a comma, semicolon or colon when one is in reach, else at a space; only a
    single "word" longer than ``limit`` (no space in it) is cut inside. Text that fits is
    returned whole, so ordinary clauses are never touched.
    """
    if limit < 1:
        raise ValueError(f"limit must be ≥ 1, got {limit!r}")
    text = text.strip()
    if len(text) <= limit:
        return [text] if text else []
    pieces: list[str] = []
    start = 0
    for match in _CLAUSE_END.finditer(text):
        if match.end() - start > limit:  # this clause alone is too long: cut it at words
            pieces.extend(_cut_words(text[start : match.end()], limit))
        elif pieces and len(pieces[-1]) + 1 + match.end() - start <= limit:
            pieces[-1] = f"{pieces[-1]} {text[start : match.end()].strip()}"  # pack short ones
        else:
            pieces.append(text[start : match.end()].strip())
        start = match.end()
    pieces.extend(_cut_words(text[start:], limit))
    return [p for p in pieces if p]


def _cut_words(text: str, limit: int) -> list[str]:
    """``text`` packed into pieces of whole words of at most ``limit`` characters."""
    pieces: list[str] = []
    current = ""
    for whole in text.split():
        word = whole
        while len(word) > limit:  # no space to cut at: cut the word itself
            if current:
                pieces.append(current)
                current = ""
            pieces.append(word[:limit])
            word = word[limit:]
        if current and len(current) + 1 + len(word) <= limit:
            current = f"{current} {word}"
        else:
            if current:
                pieces.append(current)
            current = word
    if current:
        pieces.append(current)
    return pieces


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
class AudioChunk:
    """A piece of an utterance: its samples and the marks that fall inside it.

    Offsets in marks count from the start of the whole utterance, not of the chunk.
    """

    samples: Samples
    sample_rate: int
    phonemes: tuple[PhonemeMark, ...] = ()
    visemes: tuple[VisemeMark, ...] = ()


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
