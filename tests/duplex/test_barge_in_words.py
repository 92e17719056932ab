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
    barge = BargeIn()
    assert barge.close("yeah") is None  # nothing was open
    barge.open()
    assert barge.pending
    assert barge.stop()
    assert not barge.stop()  # the first decision only
    assert not barge.pending
    assert barge.stopped
    assert barge.close("stop") == "stop"
    barge.open()
    assert barge.close("uh-huh") == "backchannel"
    assert (barge.heard, barge.stops, barge.passed) == (2, 1, 1)
