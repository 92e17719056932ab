"""The real engines report where each word of the text starts in their audio."""

from __future__ import annotations

import pytest

from anima.speech.base import AudioChunk, Cancel
from anima.speech.espeak.espeak import EspeakEngine
from anima.speech.piper.piper import PiperEngine
from anima.speech.words import word_starts

pytestmark = pytest.mark.model

TEXT = "Hello there, it's 2024! Nice to meet you. Dr. Smith waves."


def spoken(engine: PiperEngine | EspeakEngine, text: str) -> list[AudioChunk]:
    return list(engine.synthesize(text, "en-US", Cancel()))


def check_words(chunks: list[AudioChunk], text: str) -> list[float]:
    rate = chunks[0].sample_rate
    total = sum(len(c.samples) for c in chunks)
    words = [w for c in chunks for w in c.words]
    # every text word once, in order, at increasing samples inside the audio
    assert [w.char for w in words] == word_starts(text)
    offsets = [w.offset for w in words]
    assert offsets == sorted(offsets)
    assert len(set(offsets)) == len(offsets)
    assert offsets[0] >= 0
    assert offsets[-1] < total
    start = 0
    for chunk in chunks:  # each mark sits in the chunk that holds its sample
        for w in chunk.words:
            assert start <= w.offset < start + len(chunk.samples) or chunk is chunks[-1]
        start += len(chunk.samples)
    return [o / rate for o in offsets]


def test_piper_marks_every_word_and_a_number_spoken_as_several(piper: PiperEngine) -> None:
    times = check_words(spoken(piper, TEXT), TEXT)
    # "2024" is "two thousand and twenty four": far longer than the word before it
    assert times[4] - times[3] > 2 * (times[3] - times[2])


def test_piper_word_marks_survive_its_clause_cache(piper: PiperEngine) -> None:
    text = "Good morning. Good morning, my friend."
    first = [(w.char, w.offset) for c in spoken(piper, text) for w in c.words]
    again = [(w.char, w.offset) for c in spoken(piper, text) for w in c.words]
    assert [c for c, _ in first] == [c for c, _ in again] == word_starts(text)


def test_espeak_marks_every_word_once() -> None:
    engine = EspeakEngine()
    try:
        engine.load()
    except Exception as exc:  # pragma: no cover - the Debian library is missing
        pytest.skip(f"eSpeak NG is not available: {exc}")
    text = "Hello there, it's 2024! Nice café. Dr. Smith waves."
    times = check_words(spoken(engine, text), text)
    assert times[4] - times[3] > 2 * (times[3] - times[2])
