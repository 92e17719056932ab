"""Animation names as people write them (issue 30 item 5): any case, the agent's friendly
aliases, and a "did you mean" on every refusal, on both shipped bodies' libraries."""

from __future__ import annotations

from pathlib import Path

import pytest

from anima.agent.understanding.aliases import choice_aliases
from anima.agent.understanding.lexicon import EXTRA_PHRASES
from anima.agent.vocabulary import vocabulary_registry
from anima.animation.library import AnimationLibrary, shipped_folder
from anima.behaviour.vocabulary import Vocabulary
from anima.config import BehaviourConfig
from anima.errors import UnknownAnimationError
from anima.language.names import ALIASES, Names

from .test_library import write_anim

pytestmark = pytest.mark.integration


def shipped(body: str) -> AnimationLibrary:
    lib = AnimationLibrary([shipped_folder(body)], channel_count=200)
    lib.load()
    return lib


@pytest.fixture(scope="module")
def nadine() -> AnimationLibrary:
    return shipped("nadine")


@pytest.fixture(scope="module")
def reachy() -> AnimationLibrary:
    return shipped("reachy_mini")


@pytest.mark.parametrize(
    "given", ["wave", "waving", "lookup_waving", "LOOKUP_WAVING", "Lookup Waving", "Wave"]
)
def test_the_names_people_guess_are_the_wave(nadine: AnimationLibrary, given: str) -> None:
    assert nadine.resolve(given) == "LOOKUP_Waving"
    assert nadine.get(given).name == "LOOKUP_Waving"  # what commands and events carry
    assert given not in nadine or given == "LOOKUP_Waving"  # membership stays exact


def test_every_name_the_agent_understands_is_accepted_on_both_bodies(
    nadine: AnimationLibrary, reachy: AnimationLibrary
) -> None:
    for lib in (nadine, reachy):
        registry = vocabulary_registry(Vocabulary.of(lib, BehaviourConfig()))
        friendly = choice_aliases(registry)
        checked = 0
        for action in ("play_animation", "look_at_target"):
            for alias, choice in friendly.get(action, {}).get("name", {}).items():
                assert lib.resolve(str(alias)) == choice, alias
                checked += 1
        for phrase in EXTRA_PHRASES["play_animation"]:
            target = phrase.args["name"]
            if target in lib:
                assert lib.resolve(phrase.text) == target, phrase.text
        assert checked >= 8


def test_each_body_resolves_a_shared_alias_to_its_own_gesture(
    nadine: AnimationLibrary, reachy: AnimationLibrary
) -> None:
    assert nadine.resolve("happy") == "smile"
    assert reachy.resolve("happy") == "happy_antennas"
    assert reachy.resolve("Go To Sleep") == "go_to_sleep"
    assert reachy.resolve("shake your head") == nadine.resolve("head shake") == "shake"
    assert nadine.resolve("look at me") == "Posture_LookAtInterviewer"
    assert nadine.aliases()["wave"] == "LOOKUP_Waving"
    assert "wave" not in reachy.aliases()


def test_a_gesture_another_body_has_is_refused_as_missing_not_as_a_look_alike(
    reachy: AnimationLibrary,
) -> None:
    for given in ("wave", "lookup_waving", "handshake"):
        with pytest.raises(UnknownAnimationError) as refused:
            reachy.resolve(given)
        reason = str(refused.value)
        assert reason.startswith(f"unknown animation {given!r}: this robot's library has no ")
        assert "did you mean one of nod, sad, shake, curious, wake_up, go_to_sleep, …?" in reason
        assert "8 in all" in reason
        assert "wake_up?" not in reason  # "wave" looks like "wake", but is not it


def test_every_refusal_says_what_is_close(
    nadine: AnimationLibrary, reachy: AnimationLibrary
) -> None:
    with pytest.raises(UnknownAnimationError, match=r"'wav' \(did you mean LOOKUP_Waving\?\)"):
        nadine.get("wav")
    with pytest.raises(UnknownAnimationError, match=r"'nodd' \(did you mean nod\?\)"):
        reachy.get("nodd")
    with pytest.raises(UnknownAnimationError) as refused:
        nadine.get("moonwalk")
    assert str(refused.value) == (
        "unknown animation 'moonwalk' (nothing close; did you mean one of bow, nod, blink, "
        "shake, smile, think, …? 16 in all)"
    )


def test_a_real_name_wins_over_an_alias_and_a_shared_spelling_is_nobodys(
    tmp_path: Path,
) -> None:
    write_anim(tmp_path, "a.xml", "wave", "<channel13>40 90 40</channel13>")
    write_anim(tmp_path, "b.xml", "LOOKUP_Waving", "<channel13>40 90 40</channel13>")
    write_anim(tmp_path, "c.xml", "Nod", "<channel9>120 140</channel9>")
    write_anim(tmp_path, "d.xml", "nod", "<channel9>120 140</channel9>")
    lib = AnimationLibrary([tmp_path], channel_count=25)
    assert lib.load().errors == ()
    assert lib.resolve("wave") == "wave"  # the file named so, not the alias
    assert lib.resolve("WAVE") == "wave"
    assert lib.resolve("waving") == "LOOKUP_Waving"
    assert (lib.resolve("Nod"), lib.resolve("nod")) == ("Nod", "nod")
    with pytest.raises(UnknownAnimationError, match="did you mean"):
        lib.resolve("NOD")  # two names spelled so: neither is guessed


def test_the_alias_table_names_only_shipped_animations() -> None:
    shipped_names = set(shipped("nadine").names()) | set(shipped("reachy_mini").names())
    for alias, targets in ALIASES.items():
        assert set(targets) <= shipped_names, alias
    assert Names(()).resolve("wave") is None


def test_a_reachy_mini_runtime_takes_its_own_aliases_at_every_door() -> None:
    from anima import commands as cmd
    from anima.build import build
    from anima.config import AnimaConfig, BodyConfig, MqttConfig, SpeechConfig, WebConfig
    from anima.testing import eventually
    from anima.wire import payloads

    cfg = AnimaConfig(
        body=BodyConfig(checker_ini="reachy_mini"),
        mqtt=MqttConfig(enabled=False),
        web=WebConfig(enabled=False),
        speech=SpeechConfig(enabled=False),
    )
    runtime = build(cfg)
    with runtime:
        # the doors' parser (MQTT, REST, console, fleet send) and the runtime's own lookup
        assert payloads.parse_animation("Happy", runtime.library).name == "happy_antennas"
        assert not runtime.execute(cmd.PlayAnimation(name="happy")).idle_layer
        assert eventually(lambda: runtime.state().move == "happy_antennas", timeout=5)
        with pytest.raises(UnknownAnimationError, match="this robot's library has no LOOKUP_"):
            payloads.parse_animation("wave", runtime.library)
