"""Animation names as people guess them, through MCP (issue 30 item 5): the agent's action
takes what every door takes, and the plan carries the library's name."""

from __future__ import annotations

import pytest

from anima.events import MoveStarted
from anima.frontdoors.mcp.robot import McpRobot
from anima.runtime import Runtime
from anima.testing.events import EventRecorder

pytestmark = pytest.mark.integration


def test_mcp_takes_the_names_people_guess(mcp: McpRobot, runtime: Runtime) -> None:
    recorder = EventRecorder().attach(runtime.events)
    out = mcp.call("play_animation", {"name": "Nodding"})
    assert not out.error, out.text
    assert out.text == "done: play_animation(name='nod'): succeeded"
    assert recorder.of(MoveStarted)[0].name == "nod"


def test_mcp_refusals_say_what_is_close(mcp: McpRobot) -> None:
    out = mcp.call("play_animation", {"name": "wav"})
    assert out.error
    assert out.text.endswith("got str 'wav' (did you mean LOOKUP_Waving?)"), out.text
