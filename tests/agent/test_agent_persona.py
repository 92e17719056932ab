"""The persona file: read and checked (each mistake named with its line), the rule planner
answering from it, the LLM planners given its instructions, its voice speaking first."""

from __future__ import annotations

from pathlib import Path

import pytest

from anima.agent.persona import agent_as, load_persona, parse_persona, speech_as
from anima.agent.planners.rules import RulePlanner
from anima.agent.vocabulary import builtin_registry
from anima.config import AgentConfig, SpeechConfig
from anima.errors import ConfigError

pytestmark = pytest.mark.fast

ADA = """---
name: Ada
voice: espeak
locale: en-GB
greeting: Welcome to the museum! I'm Ada.
made_by: the museum's robotics club
actions: [play_animation, look_at_target]
talks_about: [the museum, its exhibits]
never_talks_about: [politics]
---
You are Ada, a guide robot in a science museum.
"""


def test_the_default_persona_reads_and_names_nobody() -> None:
    persona = load_persona()
    assert persona.name is None  # agent.name stays the robot's name
    assert persona.voice is None
    assert "friendly social robot" in persona.instructions
    persona.check_actions({"say"})  # offers nothing in particular: nothing to check


def test_a_persona_file_is_read_whole(tmp_path: Path) -> None:
    path = tmp_path / "persona.md"
    path.write_text(ADA, encoding="utf-8")
    ada = load_persona(str(path))
    assert (ada.name, ada.voice, ada.locale) == ("Ada", "espeak", "en-GB")
    assert ada.actions == ("play_animation", "look_at_target")
    assert ada.instructions == "You are Ada, a guide robot in a science museum."
    prompt = ada.prompt("Answer in one sentence.")
    assert prompt.startswith("You are Ada")
    assert "You like to talk about: the museum; its exhibits." in prompt
    assert "Never talk about: politics." in prompt
    assert prompt.endswith("Answer in one sentence.")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("---\nname: Ada\nmood: happy\n---\nbody", r"x\.md:3: unknown key 'mood'"),
        ("---\nvoice: alloy\n---\n", r"x\.md:2: voice 'alloy' is not a voice anima has"),
        ("---\nname: [1, 2]\n---\n", r"x\.md:2: name must be one line of text"),
        ("---\nname: " + "n" * 61 + "\n---\n", "name is at most 60 characters"),
        ("---\nlocale: english\n---\n", "locale must look like en-US"),
        ("---\nactions: say\n---\n", "actions must be a list"),
        ("---\nname: Ada\nbody without an end", "no closing '---' line"),
        ("---\n- a list\n---\n", "must be keys and values"),
        ("---\nname: [unclosed\n---\n", r"x\.md:\d+: invalid YAML"),
        ("---\n---\n" + "x" * 100_001, "at most 100000 characters"),
    ],
)
def test_each_mistake_is_named(text: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        parse_persona(text, "x.md")


def test_a_missing_or_unreadable_file_is_named(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"agent\.persona: no file"):
        load_persona(str(tmp_path / "nope.md"))
    bad = tmp_path / "bad.md"
    bad.write_bytes(b"\xff\xfe\x00")
    with pytest.raises(ConfigError, match="UTF-8"):
        load_persona(str(bad))


def test_an_action_the_robot_lacks_is_refused_by_name() -> None:
    ada = parse_persona("---\nactions: [play_animation, fly]\n---\n", "ada.md")
    with pytest.raises(ConfigError, match=r"ada\.md: actions: 'fly' is not an action of this"):
        ada.check_actions(set(builtin_registry().names()))


def test_the_rule_planner_answers_as_the_persona() -> None:
    ada = parse_persona(ADA, "ada.md")
    agent = agent_as(AgentConfig(), ada)
    assert (agent.name, agent.locale) == ("Ada", "en-GB")
    planner = RulePlanner(builtin_registry(), name=agent.name)
    planner.speak_as(ada)
    assert planner.plan("what's your name").response == "My name is Ada."
    assert planner.plan("who made you").response == ("I'm Ada, made by the museum's robotics club.")
    assert planner.plan("hello").response == "Welcome to the museum! I'm Ada."
    can = planner.plan("what can you do").response
    assert "wave" in can  # a gesture: play_animation is offered
    assert "say things" not in can  # say is not
    assert planner.plan("nod").actions == ["play_animation(name='nod')"]  # still does all


def test_without_a_persona_of_its_own_the_answers_are_as_before() -> None:
    planner = RulePlanner(builtin_registry())
    planner.speak_as(load_persona())
    assert planner.plan("what's your name").response == "My name is Anima."
    assert "say things" in planner.plan("what can you do").response


def test_the_persona_voice_speaks_first() -> None:
    ada = parse_persona(ADA, "ada.md")
    assert speech_as(SpeechConfig(), ada).engines == ("espeak", "piper")
    assert speech_as(SpeechConfig(engines=("piper",)), ada).engines == ("espeak", "piper")
    assert speech_as(SpeechConfig(), load_persona()).engines == ("piper", "espeak")


def test_build_gives_the_persona_voice_and_name(tmp_path: Path) -> None:
    from anima.build import build
    from anima.config import AnimaConfig
    from anima.config.memory import MemoryConfig

    path = tmp_path / "ada.md"
    path.write_text(ADA, encoding="utf-8")
    agent = AgentConfig(
        enabled=True, persona=str(path), audio_in="none",
        memory=MemoryConfig(path=str(tmp_path / "m.sqlite3")),
    )  # fmt: skip
    runtime = build(AnimaConfig(agent=agent), doors=False)
    assert runtime.config.speech.engines == ("espeak", "piper")
    conversation = runtime.agent
    assert conversation is not None
    assert conversation.planner.plan("what is your name").response == "My name is Ada."  # type: ignore[union-attr]
