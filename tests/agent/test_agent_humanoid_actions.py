"""Humanoid actions: against a recording stand-in, and through AdamClient to the simulated Adam."""

from __future__ import annotations

import contextlib
import dataclasses
import threading
import time
from collections.abc import Iterator

import pytest

from anima.agent.executor import Executor
from anima.agent.plan import parse_plan
from anima.agent.vocabulary import builtin_registry
from anima.drivers.sim import SimDriver
from anima.errors import CommandNotAllowedError, PlanError
from anima.events import ActionStatus, StepStatus
from anima.humanoid.spec import MOTIONS, NEXT_MODES, POSTURE, RobotState
from anima.runtime import Runtime
from anima.speech.sinks import NullSink
from anima.testing import FakeClock, eventually
from anima.testing.tts import ScriptedEngine

from .conftest import Recorder, fake_clock

pytestmark = pytest.mark.integration


class Stand:
    """A humanoid stand-in that records commands and refuses speed outside a gait; its modes
    are reached at once (the simulated Adam below takes its time)."""

    def __init__(self, *, walking: bool = True) -> None:
        self.calls: list[tuple[object, ...]] = []
        self.walking = walking
        self.mode = "Walk" if walking else "Stand"

    def state(self) -> RobotState:
        modes = (*NEXT_MODES.get(self.mode, ()), "Stop")
        return dataclasses.replace(_STATE, fsm_name=self.mode, mode_enable_list=modes)

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
        self.mode = mode
        self.walking = mode in ("Walk", "Run")
        return f"entering {mode}"


_STATE = RobotState(
    message="",
    fsm_name="Stop",
    current_motion="",
    current_action_list=(),
    mode_enable_list=(),
    motion_enable_list=tuple(MOTIONS),
    action_enable_list=tuple(POSTURE),
    carrybox_enable_list=(),
    balance_control_enable="",
    stand_pitch=0.0,
    stand_roll=0.0,
    stand_yaw=0.0,
    stand_height=0.0,
    x_vel=0.0,
    y_vel=0.0,
    yaw_vel=0.0,
    balance_control_state=False,
    motion_files_enable=True,
    current_control_mode=0,
)


def test_timed_walks_and_turns_end_standing_still(runtime: Runtime) -> None:
    robot = Stand(walking=False)
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
    )  # stand_motion brings the walking robot back to Stand
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
        ("set_mode", "Stand"),
        ("stand_motion", "Greeting"),
        ("posture", 0.05, 0.0, 0.0, -0.1),
        ("speed", 0.0, 0.0, 0.0, False),  # refused in Stand (nothing walks): not a failure
    ]
    assert result.feedback is not None
    assert "result: in Walk; playing Greeting; ok" in result.feedback


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


def test_the_mode_path_follows_the_vendors_flow() -> None:
    from anima.agent.humanoid_actions import BringUpError, mode_path

    assert mode_path("Stop", "Walk") == ["Start", "Zero", "Stand", "Walk"]
    assert mode_path("Zero", "Stand") == ["Stand"]
    assert mode_path("Walk", "Stand") == ["Stand"]
    assert mode_path("Walk", "Walk") == []
    with pytest.raises(BringUpError, match="cannot go from Run to Start"):
        mode_path("Run", "Start")


def test_interrupt_stops_the_walk_at_once(
    executor: Executor, runtime: Runtime, recorder: Recorder
) -> None:
    robot = Stand()
    reg = builtin_registry(humanoid=robot)
    with fake_clock(runtime).hold():  # the walk's 30 s do not pass before the cancel
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
    robot = Stand(walking=True)
    result = Executor(runtime).run(
        parse_plan(builtin_registry(humanoid=robot), ["stop()"]), timeout=5
    )
    assert result.outcome == "succeeded"
    assert robot.calls == [("speed", 0.0, 0.0, 0.0, False)]


class Recording:
    """An AdamClient that records the modes it sets (the robot's view of the bring-up); with
    ``hold_when_walking``, a walk's first speed holds the runtime's clock until
    :meth:`release` (the walk's seconds wait for the test)."""

    def __init__(self, client: object, clock: FakeClock) -> None:
        self.client = client
        self.clock = clock
        self.modes: list[str] = []
        self.hold_when_walking = False
        self.walking = threading.Event()
        self._held = contextlib.ExitStack()

    def __getattr__(self, name: str) -> object:
        return getattr(self.client, name)

    def set_mode(self, mode: str) -> str:
        self.modes.append(mode)
        return self.client.set_mode(mode)  # type: ignore[attr-defined, no-any-return]

    def speed(self, x: float, y: float, yaw: float, *, continuous: bool = False) -> str:
        said: str = self.client.speed(x, y, yaw, continuous=continuous)  # type: ignore[attr-defined]
        if continuous and self.hold_when_walking and not self.walking.is_set():
            self._held.enter_context(self.clock.hold())
        if continuous:
            self.walking.set()
        return said

    def release(self) -> None:
        self._held.close()


@pytest.fixture
def adam(runtime: Runtime) -> Iterator[tuple[object, Recording, FakeClock]]:
    """The simulated Adam on the runtime's clock (as ``anima serve --humanoid sim`` runs it),
    the client to it, and that clock."""
    pytest.importorskip("grpc")
    from anima.humanoid.client import AdamClient
    from anima.humanoid.server import AdamServer

    clock = fake_clock(runtime)
    server = AdamServer(port=0, clock=clock)
    port = server.start()
    client = AdamClient("127.0.0.1", port, connect_timeout_s=5.0).connect()
    robot = Recording(client, clock)
    try:
        yield server, robot, clock
    finally:
        robot.release()
        client.close()
        server.stop()


def test_walk_forward_from_a_fresh_start_brings_the_simulated_adam_up(
    runtime: Runtime, adam: tuple[object, Recording, FakeClock]
) -> None:
    """Issue 13: the simulated Adam starts with its drives off and "walk forward a bit" failed
    "in Stop (drives off: SetMode Start)". The action brings it up as the vendor's flow says."""
    from anima.humanoid.server import AdamServer

    server, robot, _ = adam
    assert isinstance(server, AdamServer)
    assert isinstance(robot, Recording)
    assert server.adam.mode == "Stop"
    reg = builtin_registry(humanoid=robot)  # type: ignore[arg-type]
    result = Executor(runtime).run(parse_plan(reg, ["walk_forward(seconds=0.2)"]), timeout=30)
    assert result.outcome == "succeeded", result.steps[0].message
    assert robot.modes == ["Start", "Zero", "Stand", "Walk"]
    assert server.adam.mode == "Walk"
    assert server.adam.gait.axes["x_speed"].target == 0.0  # stood still after the walk
    # and a stand motion next brings it back to Stand first (Walk → Stand once at rest)
    result = Executor(runtime).run(parse_plan(reg, ["stand_motion('Greeting')"]), timeout=30)
    assert result.outcome == "succeeded", result.steps[0].message
    assert robot.modes[-1] == "Stand"
    assert server.adam.motion is not None
    assert server.adam.motion[0] == "Greeting"


@pytest.mark.parametrize(
    ("whose", "said"),
    [
        ("robot", "the robot is in emergency stop (drive errors latched"),
        ("runtime", "the robot is in emergency stop"),
    ],
)
def test_bring_up_never_undoes_an_emergency_stop(
    runtime: Runtime, adam: tuple[object, Recording, FakeClock], whose: str, said: str
) -> None:
    """The robot's own (drive errors latched: only an operator clears them) or the runtime's:
    nothing is sent, and the step says why."""
    from anima import commands as cmd
    from anima.humanoid.server import AdamServer

    server, robot, _ = adam
    assert isinstance(server, AdamServer)
    assert isinstance(robot, Recording)
    if whose == "robot":
        robot.client.set_mode("Start")  # type: ignore[attr-defined]
        robot.client.set_mode("Stop")  # type: ignore[attr-defined]
        assert server.adam.errors
    else:
        runtime.execute(cmd.EmergencyStop())
    reg = builtin_registry(humanoid=robot)  # type: ignore[arg-type]
    for plan in (["walk_forward(seconds=0.2)"], ["turn('left', seconds=0.2)"]):
        result = Executor(runtime).run(parse_plan(reg, plan), timeout=30)
        step = result.steps[0]
        assert step.status is StepStatus.FAILED
        assert step.message.startswith(said)
    assert robot.modes == []
    assert server.adam.mode == "Stop"
    assert server.adam.errors == (whose == "robot")


def test_a_cancel_during_the_bring_up_ends_it_at_once(
    runtime: Runtime, adam: tuple[object, Recording, FakeClock], recorder: Recorder
) -> None:
    from anima.humanoid.server import AdamServer

    server, robot, clock = adam
    assert isinstance(server, AdamServer)
    assert isinstance(robot, Recording)
    reg = builtin_registry(humanoid=robot)  # type: ignore[arg-type]
    ex = Executor(runtime)
    with clock.hold():  # the robot's time stands still: Start is never reached
        task = ex.start(parse_plan(reg, ["walk_forward(seconds=1)"]))
        assert eventually(lambda: robot.modes == ["Start"])
        t0 = time.monotonic()
        task.cancel("wake")
        result = task.join(5)
    assert time.monotonic() - t0 < 1.0
    assert result is not None
    assert result.outcome == "interrupted"
    assert robot.modes == ["Start"]  # nothing more was asked of the robot


def test_through_adam_client_to_the_simulated_adam(
    runtime: Runtime, adam: tuple[object, Recording, FakeClock]
) -> None:
    from anima.humanoid.server import AdamServer

    server, robot, _ = adam
    assert isinstance(server, AdamServer)
    reg = builtin_registry(humanoid=robot)  # type: ignore[arg-type]
    ex = Executor(runtime)
    gait = server.adam.gait.axes
    robot.hold_when_walking = True  # brought up on fake time, then its 30 s wait for the cancel
    task = ex.start(parse_plan(reg, ["walk_forward(seconds=30, speed=0.4)"]))
    assert robot.walking.wait(10)
    assert gait["x_speed"].target == 0.4
    task.cancel("wake")
    result = task.join(5)
    robot.release()
    assert result is not None
    assert result.outcome == "interrupted"
    assert gait["x_speed"].target == 0.0  # told to stand still before the task ended


def test_walk_forward_a_bit_works_from_a_fresh_anima_serve_agent_humanoid_sim() -> None:
    """`anima serve --agent --humanoid sim`, then "walk forward a bit": the agent (built before
    the runtime starts, as serve does) plans it with the rule planner and walks the runtime's
    simulated Adam from its fresh start, on the runtime's clock (the 7 s bring-up, Start → Walk),
    here autojump fake time: the seconds pass as fast as the runtime and the robot work."""
    pytest.importorskip("grpc")
    from anima import commands as cmd
    from anima.build import build
    from anima.config import AgentConfig, HumanoidConfig
    from anima.events import PlanFinished

    from .conftest import quiet_config

    config = dataclasses.replace(
        quiet_config(),
        humanoid=HumanoidConfig(type="sim", sim_port=0),
        agent=AgentConfig(enabled=True, audio_in="none"),
    )
    # as serve builds it: the agent before the runtime starts the link
    clock = FakeClock(autojump=True)
    rt = build(
        config, doors=False, driver=SimDriver(), clock=clock, audio_sink=NullSink(clock),
        tts=[ScriptedEngine()],
    )  # fmt: skip
    rec = Recorder()
    rt.events.subscribe(rec)
    rt.start()
    try:
        rt.execute(cmd.Ask(text="walk forward a bit"))
        done = rec.wait_for(lambda e: isinstance(e, PlanFinished), timeout=40)
        assert isinstance(done, PlanFinished)
        assert done.outcome == "succeeded", done.feedback
        started = rec.of("plan_started")[0]
        assert getattr(started, "steps", ())[0].startswith("walk_forward(")
        assert rt.humanoid is not None
        assert rt.humanoid.client is not None
        assert rt.humanoid.client.state().fsm_name == "Walk"
        assert done.t - started.t >= 7.0  # the whole bring-up, on the fake clock
    finally:
        rt.stop(ease=False)  # the agent with it
        clock.close()
