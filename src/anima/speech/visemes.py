"""From phonemes (and Azure's visemes) to three lip values, following the audio.

Each phoneme maps to a viseme class, each class to normalized lip values ``(open, wide,
narrow)`` in [0, 1] (0 = the channel's rest value, 1 = its maximum). Consecutive visemes blend
over ``COARTICULATION_S`` (light coarticulation). Width is one signed quantity — wide minus
narrow — so a blend from a wide shape to a narrow one passes through neutral and the forbidden
combination (both width channels active) is never produced. The table is in ``docs/speech.md``.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable

from anima.speech.base import PhonemeMark, VisemeMark

COARTICULATION_S = 0.04  # each viseme blends in over this long, centred on its onset

# viseme class → (open, wide, narrow); at most one of wide/narrow is non-zero
LIPS: dict[str, tuple[float, float, float]] = {
    "sil": (0.0, 0.0, 0.0),  # silence, pauses
    "PP": (0.0, 0.0, 0.15),  # p b m: lips pressed
    "FF": (0.12, 0.25, 0.0),  # f v: lower lip to teeth
    "TH": (0.25, 0.2, 0.0),  # θ ð
    "DD": (0.3, 0.2, 0.0),  # t d n l
    "kk": (0.35, 0.1, 0.0),  # k g ŋ h
    "CH": (0.3, 0.0, 0.55),  # tʃ dʒ ʃ ʒ: lips pushed forward
    "SS": (0.18, 0.45, 0.0),  # s z: teeth close, lips spread
    "RR": (0.3, 0.0, 0.45),  # r ɹ
    "aa": (0.95, 0.2, 0.0),  # a ɑ æ ʌ
    "E": (0.6, 0.4, 0.0),  # e ɛ ə ɜ
    "I": (0.35, 0.65, 0.0),  # i ɪ j
    "O": (0.7, 0.0, 0.6),  # o ɔ ɒ
    "U": (0.35, 0.0, 0.85),  # u ʊ w
}

# IPA (as eSpeak NG and Piper write it) → viseme class; longest match first
_IPA: dict[str, str] = {}
for cls, symbols in {
    "PP": "p b m ɱ",
    "FF": "f v",
    "TH": "θ ð",
    "DD": "t d n l ɫ ɾ ɬ",
    "kk": "k g ɡ ŋ h x ɣ ʔ ç",
    "CH": "tʃ dʒ ʃ ʒ ɕ ʑ",
    "SS": "s z ts dz",
    "RR": "r ɹ ʁ ʀ ɻ ɚ ɝ",
    "aa": "a ɑ æ ʌ ɐ aɪ aʊ",
    "E": "e ɛ ə ɜ eɪ ø œ ɘ ɵ ᵻ",
    "I": "i ɪ j y ʏ ɨ",
    "O": "o ɔ ɒ oʊ əʊ ɔɪ",
    "U": "u ʊ w ɯ ɥ",
}.items():
    for symbol in symbols.split():
        _IPA[symbol] = cls
_LONGEST = max(len(k) for k in _IPA)
_IGNORED = set("ˈˌː ̃ʰʲ̩.-_'")

# Azure's 22 viseme ids (US English) → our classes
AZURE: dict[int, str] = {
    0: "sil", 1: "aa", 2: "aa", 3: "O", 4: "E", 5: "RR", 6: "I", 7: "U", 8: "O", 9: "aa",
    10: "O", 11: "aa", 12: "kk", 13: "RR", 14: "DD", 15: "SS", 16: "CH", 17: "TH", 18: "FF",
    19: "DD", 20: "kk", 21: "PP",
}  # fmt: skip


def viseme_of(phoneme: str) -> str:
    """The viseme class of one phoneme symbol (stress and length marks are folded)."""
    p = "".join(c for c in phoneme if c not in _IGNORED)
    if not p:
        return "sil"
    for n in range(min(_LONGEST, len(p)), 0, -1):
        cls = _IPA.get(p[:n])
        if cls is not None:
            return cls
    return "E" if p[0].isalpha() else "sil"  # an unknown letter: a neutral open mouth


class LipTrack:
    """The lip shapes of one utterance along its samples; appended as chunks arrive."""

    def __init__(self, sample_rate: int) -> None:
        self.sample_rate = sample_rate
        self._offsets: list[int] = [0]
        self._shapes: list[tuple[float, float]] = [(0.0, 0.0)]  # (open, width) width = wide−narrow
        self._blend = max(1, int(COARTICULATION_S * sample_rate))

    def add_phonemes(self, marks: Iterable[PhonemeMark]) -> None:
        for m in marks:
            self._add(m.offset, viseme_of(m.phoneme))

    def add_visemes(self, marks: Iterable[VisemeMark]) -> None:
        for m in marks:
            self._add(m.offset, AZURE.get(m.viseme, "E"))

    def add_classes(self, marks: Iterable[tuple[int, str]]) -> None:
        """Viseme classes by name (a key of :data:`LIPS`; an unknown one is a neutral open
        mouth, as an unknown letter is), each at its sample offset."""
        for offset, cls in marks:
            self._add(offset, cls if cls in LIPS else "E")

    def add_opening(self, offset: int, opening: float) -> None:
        """A mouth opening in [0, 1] with neutral width from ``offset`` on (lips that follow
        the loudness of audio that comes without marks: a voice stream's)."""
        self._put(offset, (min(1.0, max(0.0, opening)), 0.0))

    def end(self, offset: int) -> None:
        """The audio ends at ``offset``: close the mouth there."""
        self._add(offset, "sil")

    def _add(self, offset: int, cls: str) -> None:
        o, w, n = LIPS[cls]
        self._put(offset, (o, w - n))

    def _put(self, offset: int, shape: tuple[float, float]) -> None:
        offset = max(offset, self._offsets[-1])  # marks never go back in time
        if offset == self._offsets[-1] and len(self._offsets) > 1:
            self._shapes[-1] = shape
            return
        # the shape first: the motion thread reads at() while the speech thread appends, and an
        # offset without its shape would send it past the end of _shapes
        self._shapes.append(shape)
        self._offsets.append(offset)

    def at(self, sample: int) -> tuple[float, float, float]:
        """(open, wide, narrow) in [0, 1] at playback position ``sample``.

        The lips anticipate: each shape starts forming half a blend before its sound.
        """
        sample += self._blend // 2
        i = bisect.bisect_right(self._offsets, sample) - 1
        if i <= 0:
            o, width = self._shapes[0]
        else:
            start = self._offsets[i]
            nxt = self._offsets[i + 1] if i + 1 < len(self._offsets) else start + self._blend
            span = min(self._blend, max(1, nxt - start))
            r = min(1.0, (sample - start) / span)
            (o0, w0), (o1, w1) = self._shapes[i - 1], self._shapes[i]
            o, width = o0 + (o1 - o0) * r, w0 + (w1 - w0) * r
        return (o, width if width > 0 else 0.0, -width if width < 0 else 0.0)
