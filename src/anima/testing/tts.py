"""A TTS engine for tests: deterministic audio with exact phoneme marks, no library needed.

Every word becomes syllables of a consonant (quiet noise) and a vowel (a loud tone), so the
audio envelope and the mouth shapes line up by construction. It can be made slow (to play a
synthesizer slower than real time) or to fail after some chunks (to test error paths).
"""

from __future__ import annotations

import time
from collections.abc import Iterator

import numpy as np

from anima.errors import SpeechError
from anima.speech.base import AudioChunk, Cancel, PhonemeMark, WordMark
from anima.speech.words import word_starts

RATE = 16000
_VOWELS = ("a", "e", "i", "o", "u")
_CONSONANTS = ("m", "t", "s", "k", "l")


class ScriptedEngine:
    """Speaks any text as syllables: 60 ms consonant + 140 ms vowel, 80 ms pause between words."""

    def __init__(
        self,
        *,
        name: str = "scripted",
        locales: tuple[str, ...] = ("en",),
        chunk_s: float = 0.2,
        delay_s: float = 0.0,
        fail_after: int | None = None,
    ) -> None:
        self.name = name
        self._locales = locales
        self._chunk = int(chunk_s * RATE)
        self._delay = delay_s  # seconds of "synthesis" per chunk
        self._fail_after = fail_after
        self.calls = 0

    def load(self) -> None:
        """Nothing to load."""

    def supports(self, locale: str) -> bool:
        return locale.partition("-")[0] in self._locales

    def render(self, text: str) -> tuple[np.ndarray, list[PhonemeMark]]:
        """The whole utterance: samples and marks (what synthesize() streams); where each word
        starts is left in :attr:`word_onsets`."""
        self.word_onsets: list[int] = []
        parts: list[np.ndarray] = []
        marks: list[PhonemeMark] = []
        offset = 0
        rng = np.random.default_rng(len(text))
        for w, word in enumerate(text.split()):
            self.word_onsets.append(offset)
            for k in range(max(1, len(word) // 3)):
                consonant = np.int16(1200) * rng.standard_normal(int(0.06 * RATE)).clip(-3, 3)
                marks.append(PhonemeMark(_CONSONANTS[(w + k) % 5], offset))
                parts.append(consonant.astype(np.int16))
                offset += len(consonant)
                t = np.arange(int(0.14 * RATE)) / RATE
                vowel = (12000 * np.sin(2 * np.pi * 220 * t) * np.sin(np.pi * t / 0.14)).astype(
                    np.int16
                )
                marks.append(PhonemeMark(_VOWELS[(w + k) % 5], offset))
                parts.append(vowel)
                offset += len(vowel)
            pause = np.zeros(int(0.08 * RATE), dtype=np.int16)
            marks.append(PhonemeMark(" ", offset))
            parts.append(pause)
            offset += len(pause)
        return (np.concatenate(parts) if parts else np.zeros(0, np.int16)), marks

    def synthesize(self, text: str, locale: str, cancel: Cancel) -> Iterator[AudioChunk]:
        self.calls += 1
        samples, marks = self.render(text)
        words = [WordMark(c, o) for c, o in zip(word_starts(text), self.word_onsets, strict=True)]
        for i, start in enumerate(range(0, len(samples), self._chunk)):
            if cancel.is_set:
                return
            if self._fail_after is not None and i >= self._fail_after:
                raise SpeechError(f"{self.name}: synthesis failed (as scripted)")
            if self._delay:
                time.sleep(self._delay)
            end = start + self._chunk
            inside = tuple(m for m in marks if start <= m.offset < end)
            spoken = tuple(w for w in words if start <= w.offset < end)
            yield AudioChunk(samples[start:end].copy(), RATE, phonemes=inside, words=spoken)
