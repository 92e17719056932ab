"""The built-in actions on a real runtime (simulated robot, scripted TTS, a null sink), on
autojump fake time."""

from __future__ import annotations

import pytest

from anima import commands as cmd
from anima.agent.actions import ActionRegistry
from anima.agent.executor import Executor
from anima.agent.plan import parse_plan
from anima.body import Role
from anima.events import StepStatus
from anima.runtime import Runtime
from anima.testing import eventually

pytestmark = pytest.mark.fast


def _yaw_turned(runtime: Runtime, rest: float, yaw: int, timeout: float = 3.0) -> bool:
    return eventually(lambda: abs(runtime.engine.last_frame[yaw] - rest) >= 5, timeout=timeout)


def test_look_at_after_a_held_gaze_posture_releases_it_and_looks(
    runtime: Runtime, registry: ActionRegistry
) -> None:
    """ "look at the camera" then "look to your left": the camera posture is latched, and the
    look-at used to be ignored ("a gaze target is latched"): the robot said it couldn't."""
    yaw = runtime.body.role_index(Role.NECK_YAW)
    assert yaw is not None
    camera = parse_plan(registry, ["look_at_target('Posture_LookAtZoom')"])
    assert Executor(runtime).run(camera, timeout=20).outcome == "succeeded"
    assert runtime.behaviour.latched_target == "Posture_LookAtZoom"
    rest = runtime.engine.last_frame[yaw]

    left = parse_plan(registry, ["look_at(1.0, 0.6, 0.0)"])
    result = Executor(runtime).run(left, timeout=20)

    assert result.outcome == "succeeded", result.feedback
    assert [s.status for s in result.steps] == [StepStatus.SUCCEEDED]
    assert runtime.behaviour.latched_target is None
    assert _yaw_turned(runtime, rest, yaw)


def test_look_at_under_an_estop_keeps_the_latch_and_fails_the_step(
    runtime: Runtime, registry: ActionRegistry
) -> None:
    """Never fight an estop: the release is refused, so nothing changes and the step says so."""
    camera = parse_plan(registry, ["look_at_target('Posture_LookAtZoom')"])
    assert Executor(runtime).run(camera, timeout=20).outcome == "succeeded"
    runtime.execute(cmd.EmergencyStop())
    try:
        result = Executor(runtime).run(parse_plan(registry, ["look_at(1.0, 0.6, 0.0)"]), timeout=20)
    finally:
        runtime.execute(cmd.ResetEmergencyStop())

    assert result.outcome != "succeeded"
    assert result.steps[0].status is StepStatus.FAILED
    assert "emergency stop" in (result.steps[0].message or "").lower()
    assert runtime.behaviour.latched_target == "Posture_LookAtZoom"
