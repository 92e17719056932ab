"""Whisper's other readings: acted on only when the best one reads as nothing, sounds like it,
and is understood as an action or an answer (anima.agent.understanding.readings).

The readings are what Whisper's beam gave for dev requests of benchmarks/conversation (the
held-out split is never read here); the mumbles' readings are its guesses for "the the the"."""

from __future__ import annotations

import pytest

from anima.agent.actions import ActionRegistry
from anima.agent.understanding import Understanding, understand
from anima.agent.understanding.readings import (
    HINTS,
    hints,
    pick_reading,
    reread_reading,
    sounds_alike,
)
from anima.agent.vocabulary import builtin_registry

pytestmark = pytest.mark.fast

RIGHT = "look_at(x=1.0, y=-0.6, z=0.0)"


@pytest.fixture(scope="module")
def registry() -> ActionRegistry:
    return builtin_registry(animations=["nod", "LOOKUP_Waving", "smile", "bow", "blink"])


def _reader(registry: ActionRegistry, asked: list[str]):  # type: ignore[no-untyped-def]
    def read(text: str) -> Understanding:
        asked.append(text)
        return understand(text, registry)

    return read


def test_the_best_reading_is_kept_when_it_is_understood(registry: ActionRegistry) -> None:
    asked: list[str] = []
    text, reading = pick_reading("Nod.", ["Not.", "Look up."], _reader(registry, asked))
    assert (text, reading.actions) == ("Nod.", ["play_animation(name='nod')"])
    assert asked == ["Nod."]  # the others are not even read


def test_a_refusal_is_an_understanding_too(registry: ActionRegistry) -> None:
    """ "Make me a coffee." is heard: the robot says it can't, whatever else the beam guessed."""
    text, reading = pick_reading(
        "Make me a coffee.", ["Make me a copy.", "Wake me a coffee."], _reader(registry, [])
    )
    assert text == "Make me a coffee."
    assert reading.kind == "refuse"


def test_a_reading_not_understood_gives_way_to_one_that_sounds_alike(
    registry: ActionRegistry,
) -> None:
    text, reading = pick_reading(
        "Look over to your light.",
        ["You're covered in your light.", "Look over to your right."],
        _reader(registry, []),
    )
    assert text == "Look over to your right."
    assert reading.actions == [RIGHT]
    text, reading = pick_reading(
        "Cut your wave at me.", ["Could you wave at me?"], _reader(registry, [])
    )
    assert reading.actions == ["play_animation(name='LOOKUP_Waving')"]
    text, reading = pick_reading(
        "Link for you.", ["Like for me.", "blink for me."], _reader(registry, [])
    )
    assert (text, reading.actions) == ("blink for me.", ["play_animation(name='blink')"])


def test_a_decode_that_stopped_early_gives_way_to_the_whole_one(registry: ActionRegistry) -> None:
    text, reading = pick_reading("No", ["No, no, stop."], _reader(registry, []))
    assert (text, reading.actions) == ("No, no, stop.", ["stop()"])


def test_another_sentence_is_the_beam_guessing_not_hearing(registry: ActionRegistry) -> None:
    """ "the the the" read as "They will die." and "See you later.": not alike, not taken."""
    assert not sounds_alike("They will die.", "See you later.")
    text, reading = pick_reading("They will die.", ["See you later."], _reader(registry, []))
    assert (text, reading.kind) == ("They will die.", "not_understood")


def test_an_other_reading_is_never_taken_for_a_refusal(registry: ActionRegistry) -> None:
    text, reading = pick_reading(
        "Touch me on glass of water.", ["Catch me on glass of water."], _reader(registry, [])
    )
    assert text == "Touch me on glass of water."
    assert reading.kind == "not_understood"


def test_nothing_to_choose_from(registry: ActionRegistry) -> None:
    text, reading = pick_reading("Look how clean.", [], _reader(registry, []))
    assert (text, reading.kind) == ("Look how clean.", "not_understood")
    assert not sounds_alike("", "nod")
    assert not sounds_alike("...", "nod")
    assert sounds_alike("Blink, wise and smile.", "Blink twice and smile.")


def test_hints_are_the_command_phrases_nearest_the_words() -> None:
    phrases = ["wave", "nod", "look left", "look right", "look up", "say hello", "stop"]
    near = hints("Look over to your light.", phrases)
    assert len(near) == HINTS
    assert {"look left", "look right"} <= set(near)
    assert hints("...", phrases) == []
    assert hints("nod", []) == []


def test_a_reading_again_is_taken_when_it_sounds_alike_and_is_understood(
    registry: ActionRegistry,
) -> None:
    read = _reader(registry, [])
    found = reread_reading(
        "Look over to your light.",
        ["Look over to your light.", "Big turn left.", "Look over to your right."],
        read,
    )
    assert found is not None
    assert (found[0], found[1].actions) == ("Look over to your right.", [RIGHT])
    assert reread_reading("Look how clean.", ["Look how clean."], read) is None
    assert reread_reading("They will die.", ["See you later."], read) is None  # not alike
    # a refusal first: the words were heard as something it can't do, not another request
    assert reread_reading("Make me a copy.", ["Make me a coffee.", "Make me a nod."], read) is None
