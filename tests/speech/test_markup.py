"""Annotated speech's markers: parsed into clean text, segments and cues, or refused clearly."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from anima.errors import InvalidCommandError
from anima.language.markup import Cue, Segment, check_gestures, parse

pytestmark = pytest.mark.fast


def test_plain_text_is_one_segment_without_cues() -> None:
    script = parse("Hello there.")
    assert script.text == "Hello there."
    assert script.segments == (Segment("Hello there."),)
    assert not script.annotated


def test_start_cues_the_next_word_and_run_ends_a_segment() -> None:
    script = parse("Hello! ^start(LOOKUP_Waving) Nice to meet you ^run(nod) and welcome.")
    assert script.text == "Hello! Nice to meet you and welcome."
    first, second = script.segments
    assert first.text == "Hello! Nice to meet you"
    assert first.cues == (Cue("start", 7, "LOOKUP_Waving"),)
    assert first.text[7:11] == "Nice"
    assert (first.run, first.wait) == (("nod",), ("nod",))
    assert second == Segment("and welcome.")
    assert script.gestures == {"LOOKUP_Waving", "nod"}


def test_wait_holds_for_a_started_gesture_and_stop_cues_a_word() -> None:
    script = parse("^start(nod)Hi ^stop(nod) there ^wait(nod) friend")
    first, second = script.segments
    assert first.text == "Hi there"
    assert first.cues == (Cue("start", 0, "nod"), Cue("stop", 3, "nod"))
    assert (first.run, first.wait) == ((), ("nod",))
    assert second.text == "friend"


def test_a_marker_at_the_end_cues_the_segment_end() -> None:
    script = parse("All done ^start(bow)")
    assert script.segments[0].cues == (Cue("start", len("All done"), "bow"),)


def test_contextual_mode_tilts_on_questions_and_beats_on_exclamations_and_capitals() -> None:
    text = "Are you ready? Then GO now! Fine."
    script = parse(text, "contextual")
    cues = script.segments[0].cues
    assert [(c.kind, text[c.char : c.char + 4]) for c in cues] == [
        ("tilt", "read"),
        ("beat", "GO n"),
        ("beat", "now!"),
    ]
    assert parse(text, "disabled").segments[0].cues == ()


def test_mode_markers_switch_the_automatic_gestures_from_where_they_stand() -> None:
    script = parse("Really? ^mode(contextual) Really? ^mode(disabled) Really?")
    cues = script.segments[0].cues
    assert cues == (Cue("tilt", len("Really? "), ""),)


def test_a_caret_that_is_not_a_marker_is_text() -> None:
    assert parse("2^3 is eight ^ yes").text == "2^3 is eight ^ yes"


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("^dance(nod) hi", "unknown speech marker ^dance( at character 0"),
        ("hi ^start(nod", "needs one name and a closing ')'"),
        ("hi ^start() there", "needs one name"),
        ("^mode(loud) hi", "the mode is contextual or disabled"),
        ("^wait(nod) hi", "no ^start(nod) before it"),
        ("hi ^stop(wave)", "no ^start(wave) before it"),
        ("hi " + "^start(nod) x " * 33, "more than 32 speech markers in one text"),
    ],
)
def test_bad_markers_are_refused_naming_what_and_where(text: str, says: str) -> None:
    with pytest.raises(InvalidCommandError, match=re.escape(says)):
        parse(text)


def test_unknown_gesture_names_are_refused_with_the_closest_names() -> None:
    script = parse("Hi ^start(nodd) there")
    with pytest.raises(InvalidCommandError, match=r"unknown animation 'nodd' \(did you mean nod"):
        check_gestures(script, {"nod", "shake"}.__contains__, ["nod", "shake"])
    check_gestures(parse("Hi ^start(nod) there"), {"nod"}.__contains__)


PIECES = [*"ab ^()?!.", "^start(", "^run(x)", "^mode(", "^stop(", "nod)", "GO"]


@given(st.lists(st.sampled_from(PIECES), max_size=30).map("".join))
def test_any_text_parses_or_is_refused_as_an_invalid_command(text: str) -> None:
    try:
        script = parse(text, "contextual")
    except InvalidCommandError:
        return
    assert "^start(" not in script.text
    assert "^run(x)" not in script.text
    for segment in script.segments:
        for cue in segment.cues:
            assert 0 <= cue.char <= len(segment.text)


def test_contextual_mode_beats_at_the_start_of_each_longer_clause() -> None:
    text = "Well, I think we should go today. It is sunny, and the birds are singing."
    cues = parse(text, "contextual").segments[0].cues
    assert [(c.kind, text[c.char :].split(maxsplit=1)[0]) for c in cues] == [
        ("beat", "I"),
        ("beat", "and"),
    ]
