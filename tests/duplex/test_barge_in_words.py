"""Issue 14: which words heard over the robot stop it (anima.agent.barge_in)."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from anima.agent.barge_in import HINTS, BargeIn, classify

pytestmark = pytest.mark.fast


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("Stop.", "stop"), ("Wait, look at me.", "stop"), ("No, the other way.", "stop"),
        ("Hold on a second.", "stop"), ("Uh-huh.", "backchannel"), ("Yeah.", "backchannel"),
        ("Okay.", "backchannel"), ("Mm-hmm", "backchannel"), ("Right.", "backchannel"),
        ("(coughs)", "nothing"), ("", "nothing"), ("[laughs]", "nothing"),
        ("Can you wave instead?", "other"), ("What is your name?", "other"),
        ("Nobody knows", "other"),  # "no" only as a word
        ("Oh, oh yeah.", "backchannel"), ("Yeah, okay, I see.", "backchannel"),
        ("Yeah, wave.", "other"), ("Hi, see?", "backchannel"), ("Ha ha!", "backchannel"),
        ("Hey.", "other"), ("Wave.", "other"), ("Look up.", "other"), ("Okay, wave.", "other"),
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


def test_a_stop_word_stops_however_unsure_and_other_unsure_words_do_not() -> None:
    """Whisper is unsure of a bare "stop" over the echo (0.19 in the bench) and invents words
    for a hum ("mm-hmm" read as "And that's it.", 0.26): under ``barge_in_confidence`` only a
    stop word stops the robot."""
    barge = BargeIn(min_confidence=0.3)
    barge.open()
    assert barge.on_final("Stop", confidence=0.19) == "stop"
    barge.open()
    assert barge.on_final("And that's it.", confidence=0.26) == "go_on"
    barge.open()
    assert barge.on_final("What is your name?", confidence=0.41) == "stop"
    barge.open()
    assert barge.on_final("What is your name?", confidence=None) == "stop"  # no confidence given


def test_a_held_voice_whose_words_are_a_backchannel_does_not_stop_the_robot() -> None:
    barge = BargeIn()
    barge.open()
    assert not barge.on_partial("Yeah")
    assert not barge.on_sustained(voice_now=True)  # "yeah yeah" goes on for 0.8 s
    assert barge.pending
    assert barge.on_final("Yeah, yeah.") == "go_on"
    barge.open()  # a new voice: the last one's words are forgotten
    assert not barge.on_sustained(voice_now=True)  # no words yet: the first partial decides
    assert barge.on_partial("Can you")  # words: stopped now
    barge.open()
    assert not barge.on_sustained(voice_now=True)
    assert not barge.on_partial("Sure.")  # the echo's remains kept the voice on a "sure"
    assert barge.on_final("Sure.") == "go_on"
    barge.open()
    assert not barge.on_partial("What is")
    assert barge.on_sustained(voice_now=True)  # words that are not a backchannel: at once


@pytest.mark.parametrize("value", [-0.1, 1.5, float("nan"), "high"])
def test_barge_in_confidence_is_checked_at_config_load(value: object) -> None:
    from anima.config.listening import ListenConfig
    from anima.errors import ConfigError

    with pytest.raises(ConfigError, match=r"listen\.barge_in_confidence must be in \[0, 1\]"):
        ListenConfig(barge_in_confidence=value)  # type: ignore[arg-type]


def test_words_that_would_stop_the_robot_are_read_again_with_the_backchannels() -> None:
    """A final whose words would stop the robot is read again with the backchannels as hints:
    a backchannel found at least as likely lets the robot go on; stop words, backchannels
    and unsure words are decided without it."""
    asked: list[tuple[str, tuple[str, ...]]] = []
    again = {"And that's it.": "Mm hmm.", "What is your name?": None, "Wave.": "Wait."}

    def second(text: str, hints: Sequence[str]) -> str | None:
        asked.append((text, tuple(hints)))
        return again[text]

    barge = BargeIn(min_confidence=0.3, second_reading=second)
    barge.open()
    assert barge.on_final("And that's it.", confidence=0.5) == "go_on"
    barge.open()
    assert barge.on_final("What is your name?", confidence=0.5) == "stop"
    barge.open()
    assert barge.on_final("Wave.", confidence=0.5) == "stop"  # read again, not a backchannel
    for text, confidence in (("Stop.", 0.5), ("Okay.", 0.5), ("Something", 0.1)):
        barge.open()
        barge.on_final(text, confidence)
    assert barge.on_final("Nobody asked") is None  # nothing open: not read again
    assert [text for text, _ in asked] == ["And that's it.", "What is your name?", "Wave."]
    assert all(hints == HINTS for _, hints in asked)
    assert (barge.second_readings, barge.read_as_backchannel) == (3, 1)
