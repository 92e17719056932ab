"""The OpenAI planner's requests as strict OpenAI-compatible servers validate them.

llama-cpp-python's server (``python -m llama_cpp.server``) checks every message against its
schema: an assistant message kept with ``"content": null`` beside its tool calls made every
request after the first tool call an HTTP 500, so against SmolLM2-135M the robot answered
"Sorry, I can't think right now." to everything but the first request (docs/agent.md,
"Measured against a real small model").
"""

from __future__ import annotations

import pytest

from anima.testing.llm import Scripted, ScriptedOpenAIServer

from .conftest import openai_planner

pytestmark = pytest.mark.integration

pytest.importorskip("httpx")


def test_a_reply_of_tool_calls_alone_is_kept_with_text_content(
    server: ScriptedOpenAIServer,
) -> None:
    server.push(Scripted.tool_calls(("play_animation", {"name": "nod"})))  # no content
    server.push(Scripted.content("Hello!"))
    planner = openai_planner(server, stream=False)
    try:
        assert planner.plan("give me a nod").actions == ["play_animation(name='nod')"]
        assert planner.plan("hello").response == "Hello!"
    finally:
        planner.close()
    second = server.requests[1].body["messages"]
    assistant = [m for m in second if m["role"] == "assistant"]
    assert len(assistant) == 1
    assert assistant[0]["tool_calls"]
    for message in second:  # every message's content is text, as strict servers require
        assert isinstance(message["content"], str), message
