"""Humanoid actions: against a recording stand-in, and through AdamClient to the simulated Adam."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest

from anima.agent.executor import Executor, StepStatus
from anima.agent.plan import parse_plan
from anima.agent.vocabulary import builtin_registry
from anima.errors import CommandNotAllowedError, PlanError
from anima.events import ActionStatus
from anima.runtime import Runtime
from anima.testing import FakeClock

from .conftest import Recorder


class Stand:
    """A humanoid stand-in that records calls and refuses speed outside a gait."""

    def __init__(self, *, walking: bool = True) -> None:
        self.calls: list[tuple[object, ...]] = []
        self.walking = walking

    def speed(self, x: float, y: float, yaw: float, *, continuous: bool = False) -> str:
        self.calls.append(("speed", x, y, yaw, continuous))
        if not self.walking:
            raise CommandNotAllowedError("SetSpeed is not allowed now: SetSpeed needs Walk or Run")
        return "ok"

    def stand_motion(self, motion: str) -> str:
        self.calls.append(("stand_motion", motion))
        return f"playing {motion}"

    def posture(self, pitch: float, roll: float, yaw: float, height: float) -> str:
        self.calls.append(("posture", pitch, roll, yaw, height))
        return "ok"

    def set_mode(self, mode: str) -> str:
        self.calls.append(("set_mode", mode))
        return f"entering {mode}"


def test_timed_walks_and_turns_end_standing_still(runtime: Runtime) -> None:
    robot = Stand()
    reg = builtin_registry(humanoid=robot)
    plan = parse_plan(
        reg,
        [
            "set_gait('Walk')",
            "walk_forward(seconds=0.1, speed=0.5)",
            "turn('right', seconds=0.1)",
            "walk_backward(0.1)",
            "stand_motion('Greeting')",
            "posture(pitch=0.05, height=-0.1)",
            "stop_walking()",
        ],
    )
    result = Executor(runtime).run(plan, timeout=10)
    assert result.outcome == "succeeded"
    assert robot.calls == [
        ("set_mode", "Walk"),
        ("speed", 0.5, 0.0, 0.0, True),
        ("speed", 0.0, 0.0, 0.0, False),
        ("speed", 0.0, 0.0, -0.5, True),
        ("speed", 0.0, 0.0, 0.0, False),
        ("speed", -0.2, 0.0, 0.0, True),
        ("speed", 0.0, 0.0, 0.0, False),
        ("stand_motion", "Greeting"),
        ("posture", 0.05, 0.0, 0.0, -0.1),
        ("speed", 0.0, 0.0, 0.0, False),
    ]
    assert result.feedback is not None
    assert "result: entering Walk; playing Greeting; ok" in result.feedback


def test_ranges_and_choices_are_checked_before_anything_moves() -> None:
    reg = builtin_registry(humanoid=Stand())
    for bad, why in [
        ("walk_forward(speed=3)", "speed must be in [0.05, 1]"),
        ("posture(pitch=0.5)", "pitch must be in [-0.1, 0.1]"),
        ("stand_motion('Backflip')", "name must be one of"),
        ("set_gait('Stop')", "mode must be one of 'Stand', 'Walk', 'Run'"),
        ("turn('up')", "direction must be one of 'left', 'right'"),
    ]:
        with pytest.raises(PlanError) as info:
            parse_plan(reg, [bad])
        assert why in str(info.value)


def test_walking_outside_a_gait_fails_with_the_robots_reason_and_a_hint(runtime: Runtime) -> None:
    robot = Stand(walking=False)
    reg = builtin_registry(humanoid=robot)
    result = Executor(runtime).run(parse_plan(reg, ["walk_forward()"]), timeout=5)
    step = result.steps[0]
    assert step.status is StepStatus.FAILED
    assert "SetSpeed needs Walk or Run" in step.message
    assert step.message.endswith("switch to walking first with set_gait('Walk')")


def test_interrupt_stops_the_walk_at_once(
    executor: Executor, runtime: Runtime, recorder: Recorder
) -> None:
    robot = Stand()
    reg = builtin_registry(humanoid=robot)
    task = executor.start(parse_plan(reg, ["walk_forward(seconds=30)"]))
    recorder.wait_for(lambda e: isinstance(e, ActionStatus) and e.status == "running")
    t0 = time.monotonic()
    task.cancel("wake")
    result = task.join(5)
    assert time.monotonic() - t0 < 1.0
    assert result is not None
    assert result.outcome == "interrupted"
    assert robot.calls[-1] == ("speed", 0.0, 0.0, 0.0, False)


def test_stop_also_stops_walking(runtime: Runtime) -> None:
    robot = Stand()
    result = Executor(runtime).run(
        parse_plan(builtin_registry(humanoid=robot), ["stop()"]), timeout=5
    )
    assert result.outcome == "succeeded"
    assert robot.calls == [("speed", 0.0, 0.0, 0.0, False)]


@pytest.fixture
def adam() -> Iterator[tuple[object, object, FakeClock]]:
    pytest.importorskip("grpc")
    from anima.humanoid.client import AdamClient
    from anima.humanoid.server import AdamServer

    clock = FakeClock()
    server = AdamServer(port=0, clock=clock)
    port = server.start()
    client = AdamClient("127.0.0.1", port, connect_timeout_s=5.0).connect()
    try:
        yield server, client, clock
    finally:
        client.close()
        server.stop()


def test_through_adam_client_to_the_simulated_adam(
    runtime: Runtime, adam: tuple[object, object, FakeClock]
) -> None:
    from anima.humanoid.client import AdamClient
    from anima.humanoid.server import AdamServer
    from anima.humanoid.spec import ENTER_S

    server, client, clock = adam
    assert isinstance(server, AdamServer)
    assert isinstance(client, AdamClient)
    reg = builtin_registry(humanoid=client)
    ex = Executor(runtime)
    # not walking yet: the robot's refusal reaches the planner, with the hint
    refused = ex.run(parse_plan(reg, ["walk_forward(seconds=0.1)"]), timeout=10)
    assert refused.steps[0].status is StepStatus.FAILED
    assert "set_gait('Walk')" in refused.steps[0].message
    for mode in ("Start", "Zero", "Stand", "Walk"):
        client.set_mode(mode)
        clock.advance(ENTER_S[mode])
    assert client.state().fsm_name == "Walk"
    gait = server.adam.gait.axes
    task = ex.start(parse_plan(reg, ["walk_forward(seconds=30, speed=0.4)"]))
    deadline = time.monotonic() + 5
    while gait["x_speed"].target != 0.4 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert gait["x_speed"].target == 0.4
    task.cancel("wake")
    result = task.join(5)
    assert result is not None
    assert result.outcome == "interrupted"
    assert gait["x_speed"].target == 0.0  # told to stand still before the task ended
