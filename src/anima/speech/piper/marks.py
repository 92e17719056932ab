"""Piper's phoneme alignments as phoneme marks: which symbols are pauses, which fold into others.

The Piper voice is loaded with alignments (``include_alignments=True``, which needs ``onnx``;
:mod:`anima.speech.piper.voice`), so each chunk Piper synthesizes says how many samples each
symbol got. Their running sum gives every symbol's start, and they add up exactly to the chunk's
length. Piper's symbols are espeak IPA, one code point each, and come as marks with nothing
dropped, so no time is lost:

- ``^`` and ``$``: the silence at the start and end of each clause; kept;
- ``" "`` (word gap) and punctuation ``, . ? ! ; :``: pauses; kept (a viseme mapper reads them as
  silence);
- ``ˈ ˌ`` (stress) and ``ː`` (length) come as entries of their own, with their own duration.
  They are folded here, so a mapper never sees a bare modifier (which would read as a pause):
  a stress mark starts the phoneme after it (``ˈo`` at the stress mark's offset), a length mark
  extends the one before it (``ɜː``).

Diphthongs stay two vowels. "Hello world" gives the marks
``^ h ə l ˈo ʊ ␠ w ˈɜː l d $`` (Piper's raw entries: ``^ h ə l ˈ o ʊ ␠ w ˈ ɜ ː l d $``).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol

from anima.speech.base import PhonemeMark

# Piper's symbols that are not phonemes: silences and pauses, and modifiers of a neighbour.
PAUSE_SYMBOLS = frozenset({"^", "$", " ", ",", ".", "?", "!", ";", ":", "-", "(", ")", "'"})
STRESS_SYMBOLS = frozenset({"ˈ", "ˌ"})  # folded into the phoneme after
LENGTH_SYMBOLS = frozenset({"ː"})  # folded into the phoneme before


class Alignment(Protocol):
    """One entry of Piper's ``phoneme_alignments`` (what this module reads of it)."""

    @property
    def phoneme(self) -> str: ...
    @property
    def num_samples(self) -> int: ...


def phoneme_marks(alignments: Iterable[Alignment], start: int = 0) -> list[PhonemeMark]:
    """Marks from Piper's alignments, starting at sample ``start``; modifiers folded (see above)."""
    marks: list[PhonemeMark] = []
    stress: PhonemeMark | None = None  # a stress mark waiting for its phoneme
    offset = start
    for alignment in alignments:
        symbol = str(alignment.phoneme)
        if stress is not None and symbol not in PAUSE_SYMBOLS | STRESS_SYMBOLS:
            marks.append(PhonemeMark(stress.phoneme + symbol, stress.offset))
            stress = None
        elif symbol in LENGTH_SYMBOLS and marks and marks[-1].phoneme not in PAUSE_SYMBOLS:
            marks[-1] = PhonemeMark(marks[-1].phoneme + symbol, marks[-1].offset)
        else:
            if stress is not None:  # a stress mark with no phoneme after it: keep it as is
                marks.append(stress)
                stress = None
            if symbol in STRESS_SYMBOLS:
                stress = PhonemeMark(symbol, offset)
            else:
                marks.append(PhonemeMark(symbol, offset))
        offset += int(alignment.num_samples)
    if stress is not None:
        marks.append(stress)
    return marks
