"""Issue 30: the terminal never showed what the robot planned. The plan and its outcome are
logged at INFO, a planner's words escaped (they come from a model or a person)."""

from __future__ import annotations

import logging

import pytest

from anima import commands as cmd
from anima.events import PlanFinished
from anima.testing import FakeTimeRobot

from .conftest import agent_moves

pytestmark = pytest.mark.fast


def test_the_plan_and_its_outcome_are_logged(
    robot: FakeTimeRobot, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.INFO, logger="anima.agent.conversation"):
        robot.execute(cmd.Ask(text="wave"))
        agent_moves(robot, "LOOKUP_Waving")
        robot.advance_until(PlanFinished, within=15)
        robot.settle(lambda: "plan succeeded" in caplog.text)
    lines = [r.getMessage() for r in caplog.records if r.getMessage().startswith("plan")]
    assert lines[0] == "plan (agent): \"play_animation(name='LOOKUP_Waving')\"", lines
    assert lines[-1].startswith("plan succeeded: 'Robot feedback:"), lines


def test_a_typed_request_and_what_the_robot_says_are_logged(
    robot: FakeTimeRobot, caplog: pytest.LogCaptureFixture
) -> None:
    """The terminal shows a typed ask (as 'heard:' shows a spoken one) and each thing the robot
    says as it starts saying it, escaped."""
    with caplog.at_level(logging.INFO, logger="anima"):
        robot.execute(cmd.Ask(text="blorp\nzing"))
        robot.settle(lambda: "saying" in caplog.text)
    said = [r.getMessage() for r in caplog.records]
    assert "asked: 'blorp\\nzing'" in said
    saying = [m for m in said if m.startswith("saying ")]
    assert saying, said
    assert "\n" not in saying[0]
    assert "I can" in saying[0]  # not understood: what it can do instead
