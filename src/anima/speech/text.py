"""What every TTS engine does to text before synthesis, so no text can stall the motion loop.

The speech service bounds text too; an engine still defends itself, whatever it is given:

- :func:`check_text` refuses more than :data:`MAX_TEXT_CHARS` at once, before any work or
  allocation in proportion to the text, with a short message that quotes its start;
- :func:`speakable` replaces what no engine can take (NUL and other control characters, lone
  surrogates) with spaces: they made eSpeak raise ``UnicodeEncodeError`` and Piper "embedded null
  character";
- :func:`cut_long` cuts a clause into pieces of at most :data:`PIECE_WEIGHT`.

Why pieces: Piper's phonemizer (espeak-ng inside its C extension) holds the GIL for all the text
it is given, ~5 µs a character: a 20,000-character clause froze every other thread, the 100 Hz
motion loop included, 60–230 ms, and Piper's voice model then ran out of memory on it. A piece of
160 characters holds it under ~1.5 ms. A symbol such as an emoji costs far more, since espeak-ng
spells out its name ("grinning face"): 160 emoji held the GIL ~90 ms, so a symbol weighs
:data:`SYMBOL_WEIGHT` characters.
"""

from __future__ import annotations

import re
import unicodedata

from anima.errors import SpeechError

# The most one synthesize() call accepts: ~20 minutes of speech, far more than one reply needs.
MAX_TEXT_CHARS = 20_000
# The most one phonemizer or synthesis call gets, in characters (a symbol weighs more): short
# enough that no C call holds the GIL over a millisecond or two, long enough that a clause is
# rarely cut (a cut adds a short pause).
PIECE_WEIGHT = 160
# What a symbol (emoji, ©, arrows: Unicode "So"), or an unassigned or private code point, weighs.
SYMBOL_WEIGHT = 16

_HEAVY = frozenset({"So", "Co", "Cn"})
_CLAUSE_END = re.compile(r"[,;:]+[\"'”’)\]]*(?=\s)")  # where a long clause may be cut first
_UNSPEAKABLE = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\ud800-\udfff]")


def check_text(engine: str, text: str, limit: int = MAX_TEXT_CHARS) -> None:
    """Refuse text longer than ``limit`` characters with a :class:`SpeechError` that says how
    long it is and quotes its start."""
    if len(text) > limit:
        raise SpeechError(
            f"{engine}: text too long to speak: {len(text):,} characters, at most {limit:,} "
            f"(it begins {text[:40]!r})"
        )


def speakable(text: str) -> str:
    """``text`` with control characters (but tab and line ends) and lone surrogates as spaces."""
    return _UNSPEAKABLE.sub(" ", text)


def weight(text: str) -> int:
    """The phonemizer cost of ``text`` in characters: 1 each, :data:`SYMBOL_WEIGHT` a symbol."""
    if text.isascii():
        return len(text)
    return sum(SYMBOL_WEIGHT if unicodedata.category(c) in _HEAVY else 1 for c in text)


def cut_long(text: str, limit: int = PIECE_WEIGHT) -> list[str]:
    """``text`` in pieces of at most ``limit`` :func:`weight`, in order, whitespace-trimmed.

    A piece ends after a comma, semicolon or colon when one is in reach, else at a space; only a
    single "word" heavier than ``limit`` (no space in it) is cut inside. Text that fits is
    returned whole, so ordinary clauses are never touched.
    """
    if limit < SYMBOL_WEIGHT:
        raise ValueError(f"limit must be ≥ {SYMBOL_WEIGHT}, got {limit!r}")
    text = text.strip()
    if weight(text) <= limit:
        return [text] if text else []
    pieces: list[str] = []
    start = 0
    for match in _CLAUSE_END.finditer(text):
        clause = text[start : match.end()].strip()
        start = match.end()
        if weight(clause) > limit:  # this clause alone is too heavy: cut it at words
            pieces.extend(_cut_words(clause, limit))
        elif pieces and weight(pieces[-1]) + 1 + weight(clause) <= limit:
            pieces[-1] = f"{pieces[-1]} {clause}"  # pack short clauses together
        elif clause:
            pieces.append(clause)
    pieces.extend(_cut_words(text[start:], limit))
    return pieces


def _cut_words(text: str, limit: int) -> list[str]:
    """``text`` packed into pieces of whole words of at most ``limit`` weight."""
    pieces: list[str] = []
    current = ""
    for whole in text.split():
        word = whole
        while weight(word) > limit:  # no space to cut at: cut the word itself
            if current:
                pieces.append(current)
                current = ""
            cut = _fitting(word, limit)
            pieces.append(word[:cut])
            word = word[cut:]
        if current and weight(current) + 1 + weight(word) <= limit:
            current = f"{current} {word}"
        else:
            if current:
                pieces.append(current)
            current = word
    if current:
        pieces.append(current)
    return pieces


def _fitting(word: str, limit: int) -> int:
    """How many leading characters of ``word`` weigh at most ``limit`` (at least one)."""
    total = 0
    for i, c in enumerate(word):
        total += weight(c)
        if total > limit:
            return max(1, i)
    return len(word)
