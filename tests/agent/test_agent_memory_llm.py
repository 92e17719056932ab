"""The OpenAI planner on the robot's memory: ``remember``/``forget`` are among its tools, and
each request carries what it remembers that matters (the person, the request's memories),
within the prompt budget; without memory no such message is sent."""

from __future__ import annotations

from pathlib import Path

import pytest

from anima.agent.planners.openai import OpenAIPlanner
from anima.agent.realtime import build_realtime_agent
from anima.agent.remembering import PROMPT_TOKENS, Remembering, register_memory, tokens_of
from anima.agent.vocabulary import builtin_registry
from anima.config import AgentConfig, AnimaConfig
from anima.config.memory import MemoryConfig
from anima.config.planner import RealtimePlannerConfig
from anima.memory.store import MemoryStore
from anima.runtime import Runtime
from anima.testing.llm import Scripted, ScriptedOpenAIServer

pytestmark = pytest.mark.integration


def memory_messages(server: ScriptedOpenAIServer, n: int) -> list[str]:
    body = server.requests[n].body
    return [m["content"] for m in body["messages"][1:] if m["role"] == "system"]


def test_the_request_carries_what_matters(tmp_path: Path) -> None:
    store = MemoryStore(tmp_path / "m.sqlite3")
    memory = Remembering(store)
    registry = builtin_registry()
    register_memory(registry, memory)
    store.add("the robot lives in room 4", who="", pinned=True, source="operator")
    store.add("I like tea", who="Bob")
    for i in range(3000):  # others' memories: only what fits and matters is sent
        store.add(f"I like jazz number {i}", who=f"P{i % 50}")
    memory.remember("my name is Ana", "Ana")
    memory.remember("I play the cello")
    with ScriptedOpenAIServer([Scripted.content("ok"), Scripted.content("ok")]) as server:
        planner = OpenAIPlanner(registry, base_url=server.base_url, model="t", stream=False)
        planner.plan("what instrument do I play")  # no memory given yet
        planner.remember_with(memory)
        planner.plan("what instrument do I play")
        planner.close()
    tools = {t["function"]["name"] for t in server.requests[1].body["tools"]}
    assert {"remember", "forget"} <= tools
    assert memory_messages(server, 0) == []  # no memory given: none sent
    (block,) = memory_messages(server, 1)
    assert "their name is Ana" in block
    assert "- Ana: I play the cello" in block
    assert "room 4" in block  # pinned by the operator
    assert "Bob" not in block  # another person's memories are not told
    assert "jazz" not in block
    assert tokens_of(block) <= PROMPT_TOKENS
    store.close()


def test_a_realtime_brain_gets_remember_forget_and_the_memory_in_its_instructions(
    runtime: Runtime, tmp_path: Path
) -> None:
    path = tmp_path / "m.sqlite3"
    with MemoryStore(path) as store:
        store.add("visitors sign in at the front desk", who="", pinned=True, source="operator")
    settings = RealtimePlannerConfig(auth="none", url="ws://127.0.0.1:9/v1/realtime")
    cfg = AnimaConfig(agent=AgentConfig(planner=settings, memory=MemoryConfig(path=str(path))))
    brain = build_realtime_agent(runtime, cfg, environ={}, audio_in="none")
    assert {"remember", "forget"} <= set(brain.registry.names())
    assert "- everyone: visitors sign in at the front desk" in brain.session.brief.instructions
    off = AnimaConfig(agent=AgentConfig(planner=settings, memory=MemoryConfig(enabled=False)))
    plain = build_realtime_agent(runtime, off, environ={}, audio_in="none")
    assert "remember" not in plain.registry.names()
    assert "front desk" not in plain.session.brief.instructions
