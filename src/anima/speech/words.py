"""Where each word of a text starts in its audio: what annotated speech is timed by.

An engine reports :class:`~anima.speech.base.WordMark` s — the character where a word of the
text begins, and the sample where it is heard. eSpeak says so itself (its word events); Piper's
alignments mark word boundaries between phonemes (``^`` opens a sentence, a space separates
words), and a text word may be spoken as several (``2024`` is "two thousand and twenty four"),
so :func:`phoneme_words` is told how many spoken words each text word becomes.

Helpers here are pure functions over characters and marks, shared by the engines.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable, Iterable, Iterator, Sequence

from anima.speech.base import AudioChunk, PhonemeMark, WordMark

_TOKEN = re.compile(r"\S+")
# Piper's symbols that open a sentence or separate words, and those that are pauses, not sound
BOUNDARY_SYMBOLS = frozenset({"^", " "})
# a text word of letters (an apostrophe inside, punctuation around): one spoken word
PLAIN_WORD = re.compile(r"[\"'“‘(\[]*[A-Za-z]+(?:['’][A-Za-z]+)*[.,;:!?…\"'”’)\]]*")
SILENT_SYMBOLS = frozenset({"^", "$", " ", "_", ",", ".", "!", "?", ";", ":", "…", "—", "-"})


def word_starts(text: str) -> list[int]:
    """The character where each whitespace-separated word of ``text`` starts."""
    return [m.start() for m in _TOKEN.finditer(text)]


def locate(text: str, pieces: Iterable[str]) -> list[int]:
    """Where each of ``pieces`` (cut from ``text`` in order, perhaps trimmed or slightly
    rewritten) starts in ``text``: found from the end of the one before; a piece that cannot be
    found starts where the one before ended."""
    starts: list[int] = []
    cursor = 0
    for piece in pieces:
        at = text.find(piece, cursor)
        if at < 0:
            first = piece.split(maxsplit=1)[0] if piece.strip() else piece
            at = text.find(first, cursor) if first else -1
        if at < 0:
            at = cursor
        starts.append(at)
        cursor = at + len(piece) if text.startswith(piece, at) else at
    return starts


def phoneme_words(marks: Sequence[PhonemeMark]) -> list[int]:
    """The sample where each spoken word starts: the first sounding phoneme after a boundary
    (a sentence's start, or a space)."""
    onsets: list[int] = []
    open_word = True  # the text's start is a boundary
    for mark in marks:
        if mark.phoneme in BOUNDARY_SYMBOLS:
            open_word = True
        elif open_word and mark.phoneme not in SILENT_SYMBOLS:
            onsets.append(mark.offset)
            open_word = False
    return onsets


def spoken_word_marks(
    text: str,
    marks: Sequence[PhonemeMark],
    spoken: Callable[[str], int] | None = None,
    base: int = 0,
) -> list[WordMark]:
    """Word marks for ``text`` (one clause) from its phoneme marks; characters from ``base``.

    ``spoken(word)`` says how many spoken words a text word becomes (1 when not given; 0 for
    one that is not spoken, such as a dash: it takes the next word's start). When the counts do
    not add up to the words heard, the text words are spread over them in order (a gesture then
    lands on a neighbouring word, never outside the clause).
    """
    starts = word_starts(text)
    onsets = phoneme_words(marks)
    if not starts or not onsets:
        return []
    words = [text[s:].split(maxsplit=1)[0] for s in starts]
    counts = [max(0, spoken(w)) for w in words] if spoken else [1] * len(words)
    last = len(onsets) - 1
    if sum(counts) == len(onsets):
        firsts, k = [], 0
        for n in counts:
            firsts.append(onsets[min(k, last)])
            k += n
    else:
        firsts = [onsets[i * len(onsets) // len(starts)] for i in range(len(starts))]
    return [WordMark(base + s, o) for s, o in zip(starts, firsts, strict=True)]


def event_word_marks(
    text: str, events: Iterable[tuple[int, int]], length: int, base: int = 0, start: int = 0
) -> list[WordMark]:
    """Word marks from an engine's ``(sample, character)`` word events over ``text`` (one piece
    of ``length`` samples): each event moved to the start of the text word it falls in, the
    first event of each word kept (eSpeak reports "2024" as four words), none at or after the
    end (eSpeak's last event is there). Characters from ``base``, samples from ``start``."""
    starts = word_starts(text)
    marks: list[WordMark] = []
    seen: set[int] = set()
    for sample, char in events:
        if not 0 <= sample < length or not starts:
            continue
        k = bisect.bisect_right(starts, char) - 1
        if k < 0 or k in seen:
            continue
        seen.add(k)
        marks.append(WordMark(base + starts[k], start + sample))
    return marks


def share_words(
    chunks: Sequence[AudioChunk], words: Sequence[WordMark], start: int
) -> Iterator[AudioChunk]:
    """Each of ``chunks`` (the first starting at sample ``start``) with the word marks that
    start inside it (the last chunk takes any left)."""
    k = 0
    for i, chunk in enumerate(chunks):
        start += len(chunk.samples)
        inside = []
        while k < len(words) and (words[k].offset < start or i == len(chunks) - 1):
            inside.append(words[k])
            k += 1
        yield with_words(chunk, inside)


def with_words(chunk: AudioChunk, words: Iterable[WordMark]) -> AudioChunk:
    """``chunk`` with these word marks (offsets from the utterance's start, as every mark's)."""
    return AudioChunk(chunk.samples, chunk.sample_rate, chunk.phonemes, chunk.visemes, tuple(words))


def rebased(chunk: AudioChunk, chars: int) -> AudioChunk:
    """``chunk`` with its word marks' characters moved by ``chars``."""
    if not chunk.words or not chars:
        return chunk
    return with_words(chunk, (WordMark(w.char + chars, w.offset) for w in chunk.words))
