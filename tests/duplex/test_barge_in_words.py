"""Issue 14: which words heard over the robot stop it (anima.agent.barge_in)."""

from __future__ import annotations

import pytest

from anima.agent.barge_in import BargeIn, classify


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("Stop.", "stop"), ("Wait, look at me.", "stop"), ("No, the other way.", "stop"),
        ("Hold on a second.", "stop"), ("Uh-huh.", "backchannel"), ("Yeah.", "backchannel"),
        ("Okay.", "backchannel"), ("Mm-hmm", "backchannel"), ("Right.", "backchannel"),
        ("(coughs)", "nothing"), ("", "nothing"), ("[laughs]", "nothing"),
        ("Can you wave instead?", "other"), ("What is your name?", "other"),
        ("Nobody knows", "other"),  # "no" only as a word
    ],
)  # fmt: skip
def test_words_over_the_robot_are_sorted(text: str, words: str) -> None:
    assert classify(text) == words


def test_a_candidate_is_decided_once() -> None:
    barge = BargeIn(min_confidence=0.2)
    assert barge.on_final("yeah") is None  # nothing was open: an ordinary final
    barge.open()
    assert barge.pending
    assert barge.on_partial("Wait")
    assert not barge.on_partial("wait")  # the first decision only
    assert not barge.on_sustained(voice_now=True)
    assert not barge.pending
    assert barge.on_final("Wait, look at me.") == "heard"  # already stopped: the next request
    barge.open()
    assert not barge.on_sustained(voice_now=False)  # the voice ended: wait for its words
    assert barge.on_final("Uh-huh.") == "go_on"
    barge.open()
    assert barge.on_final("Thank you for watching.", confidence=0.1) == "go_on"  # unsure
    barge.open()
    assert barge.on_final("Can you wave instead?", confidence=0.6) == "stop"
    barge.open()
    assert barge.on_gave_up()  # a cough: closed, the robot goes on
    assert not barge.on_gave_up()
    barge.open()
    assert not barge.on_partial("Okay.")  # a backchannel first: the robot goes on
    assert barge.on_final("Okay, hey.", confidence=0.5) == "go_on"  # the echo's remains
    barge.open()
    assert not barge.on_partial("Yeah.")
    assert barge.on_final("Yeah, stop.", confidence=0.5) == "stop"  # a stop word still stops
    assert (barge.heard, barge.stops, barge.passed) == (7, 3, 4)
