"""A finished conversation condensed into memories by the LLM planner (agent.memory.summarise):
refused with the rule planner, kept with source ``summary`` and said in a notice, nothing sent
when the person said nothing, a failing model said too; the model's answer read defensively."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

from anima.agent.planners.openai import OpenAIPlanner
from anima.agent.remembering import Remembering
from anima.agent.summary import MOST, read_summary, summarise_later
from anima.agent.vocabulary import builtin_registry
from anima.config import AgentConfig
from anima.config.memory import MemoryConfig
from anima.config.planner import OpenAIPlannerConfig
from anima.errors import ConfigError
from anima.memory.store import MemoryStore
from anima.testing.llm import Scripted, ScriptedOpenAIServer

pytestmark = pytest.mark.fast


def test_the_rule_planner_never_summarises() -> None:
    with pytest.raises(ConfigError, match="needs an LLM planner"):
        AgentConfig(memory=MemoryConfig(summarise=True))
    AgentConfig(planner=OpenAIPlannerConfig(), memory=MemoryConfig(summarise=True))


@pytest.mark.parametrize(
    ("content", "pairs"),
    [
        ('[{"who": "Ana", "what": "I like jazz"}]', [("Ana", "I like jazz")]),
        (
            'Here: ```json\n[{"what": "the lab closes at six"}]\n```',
            [("", "the lab closes at six")],
        ),
        ("[]", []),
        ("nothing worth keeping", []),
        (
            json.dumps([{"who": 3, "what": "ok"}, {"what": ""}, "text", {"what": "x" * 501}]),
            [("", "ok")],
        ),
        ("[" + ",".join(['{"what": "a"}'] * 9) + "]", [("", "a")] * MOST),
        ("[{not json", []),
    ],
)
def test_the_models_answer_is_read_defensively(content: str, pairs: list[tuple[str, str]]) -> None:
    assert read_summary(content) == pairs


@pytest.mark.integration
def test_a_conversation_leaves_the_memories_its_model_kept(tmp_path: Path) -> None:
    memory = Remembering(MemoryStore(tmp_path / "m.sqlite3"))
    answer = json.dumps([{"who": "Ana", "what": "I am learning the cello"}])
    notices: list[str] = []
    done = threading.Event()

    def notice(text: str) -> None:
        notices.append(text)
        done.set()

    lines = ["person: my name is Ana", "robot: Nice to meet you, Ana.",
             "person: I started the cello last week"]  # fmt: skip
    with ScriptedOpenAIServer([Scripted.content(answer), Scripted(status=500)]) as server:
        planner = OpenAIPlanner(builtin_registry(), base_url=server.base_url, model="m")
        thread = summarise_later(lines, planner.summarise, memory, notice)
        assert thread is not None
        assert done.wait(10)
        sent = server.requests[0].body["messages"]
        assert "worth remembering" in sent[0]["content"]
        assert sent[1]["content"] == "\n".join(lines)
        assert notices == ["memory: kept from the conversation: Ana: I am learning the cello"]
        (kept,) = memory.store.recent()
        assert (kept.who, kept.what, kept.source) == ("Ana", "I am learning the cello", "summary")
        # nothing said by a person: nothing sent
        assert summarise_later(["robot: Hello!"], planner.summarise, memory, notice) is None
        done.clear()
        summarise_later(lines, planner.summarise, memory, notice)  # the model fails: said
        assert done.wait(10)
        assert notices[-1].startswith("memory: the conversation was not summarised: ")
        planner.close()
    assert memory.store.count() == 1
    memory.store.close()


def test_the_conversation_is_summarised_when_it_goes_idle(tmp_path: Path) -> None:
    # fake time: the person talks, 20 s of quiet end the conversation, the planner's summary
    # of what was said is kept and told in a notice
    import dataclasses

    from anima import commands as cmd
    from anima.agent.planners.base import PlannerReply
    from anima.events import ConversationChanged, Notice
    from anima.testing import FakeTimeRobot, ScriptedPlanner

    from .conftest import agent_config

    class Summarising(ScriptedPlanner):
        def __init__(self) -> None:
            super().__init__(default=PlannerReply(response="Nice to meet you."))
            self.summarised: list[list[str]] = []

        def summarise(self, lines: list[str]) -> list[tuple[str, str]]:
            self.summarised.append(lines)
            return [("Ana", "I like the cello")]

    cfg = agent_config()
    agent = dataclasses.replace(
        cfg.agent,
        planner=OpenAIPlannerConfig(),
        memory=MemoryConfig(path=str(tmp_path / "m.sqlite3"), summarise=True),
    )
    planner = Summarising()
    with FakeTimeRobot(dataclasses.replace(cfg, agent=agent), planner=planner) as robot:
        robot.execute(cmd.Ask(text="I'm Ana and I play the cello"))
        robot.advance_until(
            lambda e: isinstance(e, ConversationChanged) and e.state == "idle", within=60
        )
        told = robot.settle_for(
            lambda e: isinstance(e, Notice) and e.message.startswith("memory:"), timeout=10
        )
        memory = robot.runtime.agent.memory  # type: ignore[union-attr]
        assert told.message == "memory: kept from the conversation: Ana: I like the cello"
        assert [(m.who, m.what, m.source) for m in memory.store.recent()] == [
            ("Ana", "I like the cello", "summary")
        ]
    (lines,) = planner.summarised
    assert lines[0] == "person: I'm Ana and I play the cello"
    assert lines[1] == "robot: Nice to meet you."
