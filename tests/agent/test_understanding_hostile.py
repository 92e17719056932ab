"""Hostile input to the understanding layer: huge, odd or crafted text is never acted on by
accident, never raises, stays fast, and whatever plan comes out is valid."""

from __future__ import annotations

import ast

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from anima.agent.plan import parse_plan
from anima.agent.understanding import MAX_WORDS, Understander, understand
from anima.agent.understanding.words import wordset
from anima.agent.vocabulary import builtin_registry

pytestmark = pytest.mark.fast

REGISTRY = builtin_registry()
UNDERSTANDER = Understander(REGISTRY)


@pytest.mark.parametrize(
    "text",
    [
        "wave " * 10_000,  # 50,000 characters
        "nod and " * 40,  # past MAX_WORDS, though each part is a command
        "x" * 1000,
        "\x00\x01\x1b[2J nod",  # control characters are no words
        "\ud800 nod",  # a lone surrogate
        "🤖🤖🤖",
        "ñóď",
        "walk forward for 99999999999999999999999999 seconds",
        "nod 1e999 times",
        "nod 99999999999 times",
    ],
    ids=["50k chars", "long chain", "1000 x", "control", "surrogate", "emoji", "accents",
         "huge number", "exponent", "huge count"],
)  # fmt: skip
def test_odd_text_is_answered_without_acting(text: str) -> None:
    understood = UNDERSTANDER.understand(text)
    assert understood.actions in ([], ["play_animation(name='nod')"])
    assert understood.response or understood.actions


def test_a_chain_past_the_word_limit_is_not_understood() -> None:
    text = " and ".join(["nod"] * MAX_WORDS)
    understood = UNDERSTANDER.understand(text)
    assert understood.kind == "not_understood"
    assert "words" in understood.why


def test_a_huge_count_is_refused_not_repeated() -> None:
    understood = UNDERSTANDER.understand("nod 99999999999 times")
    assert understood.kind != "act"
    understood = UNDERSTANDER.understand("nod 900 times")
    assert understood.response == "Sorry, I can't do that more than 5 times in a row."


def test_free_text_is_said_as_heard() -> None:
    # stutters are dropped from commands, never from what is to be said
    assert understand("say bye bye", REGISTRY).actions == ["say(text='bye bye')"]
    assert understand("can you can you say ha ha ha", REGISTRY).actions == ["say(text='ha ha ha')"]
    assert understand("nod nod", REGISTRY).actions == ["play_animation(name='nod')"]
    # "waive" may stand for "wave" in a command, never inside what is to be said
    assert understand("say we waive the fee", REGISTRY).actions == ["say(text='we waive the fee')"]
    assert understand("waive at me", REGISTRY).actions == ["play_animation(name='LOOKUP_Waving')"]


@pytest.mark.parametrize(
    "text",
    [
        "say '); import os; os.system('rm -rf /'); ('",
        'say ") + open("/etc/passwd").read() + ("',
        "say {text} {seconds}",
        "say __import__('os')",
    ],
)
def test_spoken_text_is_quoted_never_code(text: str) -> None:
    understood = UNDERSTANDER.understand(text)
    assert understood.kind == "act"
    plan = parse_plan(REGISTRY, understood.actions)
    assert [s.name for s in plan.steps] == ["say"]
    call = ast.parse(understood.actions[0], mode="eval").body
    assert isinstance(call, ast.Call)
    (keyword,) = call.keywords  # one literal string argument, whatever the words
    assert isinstance(keyword.value, ast.Constant)
    assert isinstance(keyword.value.value, str)


_WORDS = st.sampled_from(
    sorted(
        wordset(
            """
            wave nod smile look left right up down at me say hello and then twice three times
            for two seconds a bit please can you stop the coffee make fly um uh , . ? walk turn
            """
        )
    )
)


@settings(max_examples=300, deadline=None)
@given(st.lists(_WORDS, max_size=14))
def test_any_mix_of_words_gives_a_valid_plan_or_words(words: list[str]) -> None:
    understood = understand(" ".join(words), REGISTRY)
    if understood.kind == "act":
        parse_plan(REGISTRY, understood.actions)
        assert understood.actions
    else:
        assert understood.actions == []
        assert understood.response


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=200))
def test_any_text_never_raises(text: str) -> None:
    understood = understand(text, REGISTRY)
    assert understood.kind in ("act", "answer", "refuse", "not_understood")


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.sampled_from(sorted(wordset("banana kitchen table purple yesterday quantum elephant"))),
        min_size=1,
        max_size=8,
    )
)
def test_words_unrelated_to_any_action_never_move_the_robot(words: list[str]) -> None:
    assert understand(" ".join(words), REGISTRY).actions == []


# what Whisper writes: the same words with punctuation between, sound-alikes of the phrases
_ALIKE = sorted(wordset("take a blow give me an ad interuse yourself look out of the camera work"))
_HEARD = st.sampled_from([*_ALIKE, ",", "."])


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(_WORDS, _HEARD), max_size=16))
def test_any_transcript_with_punctuation_gives_a_valid_plan_or_words(words: list[str]) -> None:
    understood = understand(" ".join(words), REGISTRY)
    if understood.kind == "act":
        parse_plan(REGISTRY, understood.actions)
    else:
        assert understood.actions == []


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.sampled_from([*wordset("banana kitchen table purple yesterday quantum"), ",", "."]),
        min_size=1,
        max_size=10,
    )
)
def test_unrelated_words_between_commas_are_never_a_sound_alike(words: list[str]) -> None:
    assert understand(" ".join(words), REGISTRY).actions == []


def test_the_clauses_kept_stay_bounded() -> None:
    """Every request fills the matcher's memo of clauses; it is cleared when full."""
    from anima.agent.understanding import matcher

    understander = Understander(REGISTRY)
    sizes = [0]
    for i in range(300):  # ~50 new clauses a request: full after ~80
        understander.understand(" , ".join(f"blorf{i} take a blow{j}" for j in range(12)))
        sizes.append(len(understander._matcher._seen))
        if sizes[-1] < sizes[-2]:
            break  # it was cleared: no need to fill it again
    assert max(sizes) <= matcher._CACHE_SIZE
    assert sizes[-1] < sizes[-2]  # it was full, and was cleared
