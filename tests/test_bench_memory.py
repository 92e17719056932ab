"""`anima bench memory`'s parts on a small slice: facts told over restarts are recalled by the
rule planner and reach a scripted LLM's prompt, forgetting leaves nothing, the prompt block
stays within its budget with thousands of memories."""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

import pytest

from anima.agent.remembering import PROMPT_TOKENS, Remembering
from anima.bench.memory.facts import DEV, FRESH, HELDOUT
from anima.bench.memory.memory import run_cost, run_forget, run_recall

pytestmark = pytest.mark.fast


def test_the_sets_are_twenty_facts_each_told_in_three_sessions() -> None:
    for facts in (DEV, HELDOUT, FRESH):
        assert len(facts) == 20
        assert {f.session for f in facts} == {1, 2, 3}
        for f in facts:  # the answer's word is never in the question (it must be recalled)
            assert not f.answered(f.ask)
            assert f.expect.split("|")[0].lower() in f.tell.lower()


def test_the_rule_planner_recalls_across_restarts(tmp_path: Path) -> None:
    result = run_recall("rules", "dev", tmp_path)
    assert len(result.asked) == 20
    assert result.recalled >= 18  # the 90 %
    wrong = [a for a in result.asked if not a.recalled]
    assert all(a.answer for a in wrong)  # a miss still says something


def test_a_robot_that_cannot_recall_fails_the_bench(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the check can fail: with recall broken, the answers say nothing of the facts
    monkeypatch.setattr(Remembering, "recall", lambda self, question, limit=3: [])
    result = run_recall("rules", "dev", tmp_path)
    assert result.recalled == 0
    assert all("don't know" in a.answer or "Sorry" in a.answer for a in result.asked)


@pytest.mark.integration
def test_the_facts_reach_a_scripted_llms_prompt(tmp_path: Path) -> None:
    result = run_recall("llm", "dev", tmp_path)
    assert result.recalled == 20


def test_forgetting_leaves_no_residue(tmp_path: Path) -> None:
    for person in run_forget("dev", tmp_path):
        assert person.facts == 10
        assert person.residue_rows == 0
        assert person.in_prompt == 0


def test_the_prompt_block_stays_in_its_budget(tmp_path: Path) -> None:
    cost = run_cost(2_000, tmp_path, rounds=1)
    assert cost.memories == 2_000
    assert 0 < cost.block_tokens_max <= PROMPT_TOKENS
    assert cost.block_lines_max > 0


class MishearingEars:
    """Ears that mishear as Whisper did an eSpeak voice (scripted, so the test is exact)."""

    voice = "scripted"
    MISHEARD: ClassVar[dict[str, str]] = {
        "Remember that I live in Lyon.": "Remember that I live in light on.",
        "My sister is called Eva.": "My sister is called either.",
    }

    def __init__(self) -> None:
        self.heard: list[str] = []

    def hear(self, text: str, understand: object = None) -> str:
        self.heard.append(text)
        return self.MISHEARD.get(text, text)


@pytest.mark.parametrize("correct", [False, True])
def test_a_person_who_corrects_what_is_said_back(tmp_path: Path, correct: bool) -> None:
    facts = [f for f in DEV if f.tell in MishearingEars.MISHEARD]
    ears = MishearingEars()
    result = run_recall("rules", "dev", tmp_path, ears=ears, facts=facts, correct=correct)  # type: ignore[arg-type]
    assert result.planner == "rules, spoken (scripted)" + (", corrected" if correct else "")
    assert result.recalled == (2 if correct else 0), [a.answer for a in result.asked]
    assert result.corrections == (2 if correct else 0)
    assert ("No, I said Lyon." in ears.heard) is correct


@pytest.mark.model
def test_facts_said_aloud_are_heard_and_recalled(tmp_path: Path) -> None:
    # the spoken path on a slice: Piper says each line, Whisper tiny.en hears it, the rule
    # planner acts on what it heard (anima bench memory --spoken runs the whole sets)
    from anima.bench.memory.facts import Fact
    from anima.bench.memory.memory import Ears

    facts = (
        Fact("Bob", 1, "My favourite colour is red.", "What's my favourite colour?", "red"),
        Fact("Bob", 2, "Remember that I'm learning Spanish.", "What am I learning?", "Spanish"),
    )
    ears = Ears("piper-joe")
    try:
        result = run_recall("rules", "dev", tmp_path, ears=ears, facts=facts)
    finally:
        ears.close()
    assert result.planner == "rules, spoken (piper-joe)"
    assert (
        len(ears.heard) == 5
    )  # two names given, two facts told, two asked: "My name is Bob." once
    assert result.recalled >= 1, [a.answer for a in result.asked]
