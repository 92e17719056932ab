"""Word timing: where each text word starts in the audio, from phonemes or an engine's events."""

from __future__ import annotations

import pytest

from anima.speech.base import PhonemeMark, WordMark
from anima.speech.words import event_word_marks, locate, phoneme_words, spoken_word_marks

pytestmark = pytest.mark.fast


def marks(*items: tuple[str, int]) -> list[PhonemeMark]:
    return [PhonemeMark(p, o) for p, o in items]


PHONEMES = marks(
    ("^", 0), ("h", 10), ("i", 20), (" ", 30), ("t", 40), ("u", 50), (" ", 60),
    ("θ", 70), ("a", 80), (" ", 90), ("f", 100), ("o", 110), ("!", 120), ("$", 130),
)  # fmt: skip


def test_spoken_words_start_at_the_first_sound_after_a_boundary() -> None:
    assert phoneme_words(PHONEMES) == [10, 40, 70, 100]


def test_a_text_word_spoken_as_several_takes_the_first_of_them() -> None:
    # "hi 2024!" spoken as "hi two thousand four!"
    words = spoken_word_marks("hi 2024!", PHONEMES, lambda w: 3 if w.startswith("2") else 1)
    assert words == [WordMark(0, 10), WordMark(3, 40)]


def test_counts_that_do_not_add_up_spread_the_words_in_order() -> None:
    words = spoken_word_marks("a b", PHONEMES, base=100)
    assert words == [WordMark(100, 10), WordMark(102, 70)]


def test_an_unspoken_word_takes_the_next_words_start() -> None:
    two = marks(("^", 0), ("a", 5), (" ", 9), ("b", 12))
    words = spoken_word_marks("a — b", two, lambda w: 0 if w == "—" else 1)
    assert words == [WordMark(0, 5), WordMark(2, 12), WordMark(4, 12)]


def test_engine_events_snap_to_word_starts_once_each_and_none_at_the_end() -> None:
    # eSpeak: "2024" gives four word events inside one token, and a last one at the very end
    events = [(0, 0), (50, 3), (80, 4), (90, 5), (120, 9), (200, 2)]
    words = event_word_marks("hi 2024 yes", events, length=200, base=10, start=1000)
    assert words == [WordMark(10, 1000), WordMark(13, 1050), WordMark(18, 1120)]


def test_pieces_are_located_in_order_even_when_repeated_or_rewritten() -> None:
    text = "Yes. Yes. [[x]] done"
    assert locate(text, ["Yes.", "Yes.", "[ [x]]", "done"]) == [0, 5, 10, 16]
