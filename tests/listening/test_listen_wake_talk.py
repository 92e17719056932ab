"""The long false-wake run (anima.bench.wake.talk): its corpus and its counting."""

from __future__ import annotations

import pytest

from anima.bench.wake.talk import docstring_sentences, run_talk
from anima.bench.wake.wake import Voice
from anima.listening.asr import normalize
from anima.testing.listening import FakeSpotter
from anima.testing.tts import ScriptedEngine

pytestmark = pytest.mark.fast


def test_the_corpus_is_plain_sentences_without_the_phrase() -> None:
    sentences = list(docstring_sentences())
    assert len(sentences) > 500  # over an hour of talk at ~2.5 words per second
    assert len(set(sentences)) == len(sentences)
    for sentence in sentences:
        assert 5 <= len(sentence.split()) <= 25
        assert not any(c.isdigit() or c in "()[]{}=<>_`" for c in sentence), sentence
        assert "hey robot" not in normalize(sentence)
    # a phrase that does occur in the docstrings is left out
    assert not any("the file" in normalize(s) for s in docstring_sentences("the file"))


def test_every_wake_in_the_talk_is_counted_and_the_minutes_bound_the_run() -> None:
    voice = Voice("scripted", ScriptedEngine())
    quiet = run_talk(FakeSpotter(), [voice], minutes=0.5, max_s=60)
    assert quiet.false_wakes == 0
    assert quiet.sentences > 0
    assert 30 <= quiet.talk_s < 30 + 15  # stops after the sentence that passed half a minute
    # a spotter that hears the phrase 0.1 s into every audio: one false wake per sentence
    noisy = run_talk(FakeSpotter(at=[1600]), [voice], minutes=0.5, max_s=60)
    assert noisy.false_wakes == noisy.sentences == quiet.sentences
    assert noisy.per_hour == pytest.approx(noisy.false_wakes * 3600 / noisy.talk_s)
    assert len(noisy.heard) == noisy.false_wakes
