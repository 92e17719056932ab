"""The executor on a real runtime (simulated robot, scripted TTS, a null sink), on autojump fake
time, or stepped by hand (FakeTimeRobot); the interrupt benchmark's function on the real clock."""

from __future__ import annotations

import threading
from collections.abc import Callable

import numpy as np
import pytest

from anima import commands as cmd
from anima.agent.actions import ActionRegistry
from anima.agent.executor import Executor
from anima.agent.plan import parse_plan
from anima.agent.vocabulary import builtin_registry, robot_registry
from anima.bench.agent.interrupt import measure_interrupt_latency
from anima.body import Role
from anima.errors import CommandRefusedError
from anima.events import (
    ActionStatus,
    Event,
    MoveFinished,
    MoveStarted,
    PlanFinished,
    PlanStarted,
    SpeechEnded,
    SpeechStarted,
    StepStatus,
)
from anima.runtime import Runtime
from anima.testing import FakeTimeRobot, eventually

from .conftest import Recorder, agent_moves, fake_clock

pytestmark = pytest.mark.fast


def _statuses(rec: Recorder, plan: str) -> list[tuple[int, str]]:
    return [
        (e.index, e.status)
        for e in rec.of(ActionStatus.kind)
        if isinstance(e, ActionStatus) and e.plan == plan
    ]


def _finished(rec: Recorder, plan: str) -> PlanFinished:
    e = rec.wait_for(lambda e: isinstance(e, PlanFinished) and e.plan == plan)
    assert isinstance(e, PlanFinished)
    return e


def _named(kind: type[MoveStarted | MoveFinished], name: str) -> Callable[[Event], bool]:
    return lambda e: isinstance(e, kind) and e.name == name


def test_a_plan_speaks_nods_and_looks_in_order_and_the_body_moves(
    runtime: Runtime, registry: ActionRegistry, recorder: Recorder
) -> None:
    body = runtime.body
    pitch = body.role_index(Role.NECK_PITCH)
    yaw = body.role_index(Role.NECK_YAW)
    assert pitch is not None
    assert yaw is not None
    rest = runtime.engine.last_frame
    plan = parse_plan(
        registry, ["say('hello there')", 'play_animation("nod")', "look_at(1.0, 0.6, 0.0)"]
    )
    result = Executor(runtime).run(plan, timeout=20)

    assert result.outcome == "succeeded"
    assert [s.status for s in result.steps] == [StepStatus.SUCCEEDED] * 3
    assert result.feedback == (
        "Robot feedback: Execution [\"say(text='hello there')\", \"play_animation(name='nod')\", "
        "'look_at(x=1.0, y=0.6, z=0.0)'] completed"
    )
    _finished(recorder, plan.id)
    assert _statuses(recorder, plan.id) == [
        (0, "running"),
        (0, "succeeded"),
        (1, "running"),
        (1, "succeeded"),
        (2, "running"),
        (2, "succeeded"),
    ]
    kinds = [e.kind for e in recorder.events]
    assert kinds.index(PlanStarted.kind) < kinds.index(SpeechStarted.kind)
    ended = recorder.of(SpeechEnded.kind)
    assert len(ended) == 1
    assert isinstance(ended[0], SpeechEnded)
    assert ended[0].reason == "done"
    # the nod started only after the speech ended, and ran to its end
    order = recorder.events
    i_end = order.index(ended[0])
    i_nod = next(i for i, e in enumerate(order) if _named(MoveStarted, "nod")(e))
    assert i_end < i_nod
    nod_end = [e for e in recorder.of(MoveFinished.kind) if _named(MoveFinished, "nod")(e)]
    assert len(nod_end) == 1
    assert isinstance(nod_end[0], MoveFinished)
    assert not nod_end[0].cut
    # the frames sent to the robot: the nod's pitch swing, then the head turned left
    frames = np.array([f.values for f in runtime.driver.history()])  # type: ignore[attr-defined]
    assert frames[:, pitch].max() - rest[pitch] > 15
    assert eventually(lambda: abs(runtime.engine.last_frame[yaw] - rest[yaw]) >= 5, timeout=3)


def test_cancel_mid_plan_holds_the_motion_and_cancels_the_rest(robot: FakeTimeRobot) -> None:
    registry = robot_registry(robot.runtime)
    plan = parse_plan(
        registry, ["play_animation('LOOKUP_Waving')", "say('never said')", "look_at(1, 0, 0)"]
    )
    ex = Executor(robot.runtime)
    try:
        task = ex.start(plan)
        agent_moves(robot, "LOOKUP_Waving")
        robot.advance(0.3)  # well into the wave
        canceled_at = robot.now
        task.cancel("wake")  # the halt comes first, on this thread
        held = robot.advance_until(_named(MoveFinished, "LOOKUP_Waving"), within=1.0)
        assert held.t - canceled_at <= 0.011  # cut on the very next tick
        result = task.join(5)
        assert result is not None
        assert result.outcome == "interrupted"
        assert isinstance(held, MoveFinished)
        assert held.cut
        assert held.reason == "cleared"
        assert [s.status for s in result.steps] == [StepStatus.CANCELED] * 3
        assert result.steps[0].message == "wake"
        assert result.steps[1].message == "not run: wake"
        assert result.feedback is not None
        assert result.feedback.startswith("Robot feedback: INTERRUPTED (wake): completed []")
        assert "say(text='never said')" in result.feedback
        # the motion decelerates to a hold, then nothing moves
        robot.advance(1.0)
        assert robot.runtime.engine.is_idle
        first = robot.runtime.engine.last_frame
        robot.advance(2.0)
        assert np.allclose(robot.runtime.engine.last_frame, first)
        finished = robot.settle_for(lambda e: isinstance(e, PlanFinished) and e.plan == plan.id)
        assert isinstance(finished, PlanFinished)
        assert finished.outcome == "interrupted"
        assert "INTERRUPTED" in finished.feedback
        assert not robot.recorder.of(SpeechStarted)
        assert ex.current is None
    finally:
        ex.close()


def test_cancel_while_speaking_stops_the_speech(robot: FakeTimeRobot) -> None:
    registry = robot_registry(robot.runtime)
    text = "this is a long sentence that the robot will never get to finish saying"
    plan = parse_plan(registry, [f"say({text!r})", "play_animation('nod')"])
    ex = Executor(robot.runtime)
    try:
        task = ex.start(plan)
        said = robot.settle_for(SpeechStarted)
        robot.advance(0.2)
        assert robot.runtime.speaking  # 0.2 s into several seconds of words
        task.cancel()
        ended = robot.settle_for(SpeechEnded)
        result = task.join(5)
        assert ended.utterance == said.utterance
        assert ended.reason == "stopped"
        assert result is not None
        assert result.outcome == "interrupted"
        assert [s.status for s in result.steps] == [StepStatus.CANCELED, StepStatus.CANCELED]
        assert result.feedback is not None
        assert result.feedback.startswith("Robot feedback: INTERRUPTED: completed []")
        assert not robot.runtime.speaking
        robot.advance(2.0)
        assert not [e for e in robot.recorder.of(MoveStarted) if _named(MoveStarted, "nod")(e)]
    finally:
        ex.close()


def test_wait_waits_on_the_robots_clock_and_a_cancel_ends_it_at_once(
    robot: FakeTimeRobot,
) -> None:
    ex = Executor(robot.runtime)
    try:
        task = ex.start(parse_plan(robot_registry(robot.runtime), ["wait(30)"]))
        robot.settle(lambda: robot.clock.waiting >= 1)  # the step waits on the fake clock
        robot.advance(29.9)
        assert task.join(0.05) is None  # 29.9 of its 30 s
        task.cancel()
        result = task.join(5)  # at once: a cancel does not wait for the clock
        assert result is not None
        assert result.outcome == "interrupted"
        done = ex.start(parse_plan(robot_registry(robot.runtime), ["wait(30)"]))
        robot.settle(lambda: robot.clock.waiting >= 1)
        robot.advance(30.0)
        finished = done.join(5)
        assert finished is not None
        assert finished.outcome == "succeeded"
    finally:
        ex.close()


def test_one_plan_at_a_time_unless_preempted(
    executor: Executor, runtime: Runtime, registry: ActionRegistry
) -> None:
    ex = executor
    with fake_clock(runtime).hold():  # the first plan's 30 s cannot pass meanwhile
        first = ex.start(parse_plan(registry, ["wait(30)"]))
        with pytest.raises(CommandRefusedError, match="still running"):
            ex.start(parse_plan(registry, ["wait(1)"]))
        second = ex.start(parse_plan(registry, ["wait(0.01)"]), preempt=True)
    first_result = first.join(0)
    assert first_result is not None
    assert first_result.outcome == "interrupted"
    assert first_result.steps[0].message == "preempted"
    second_result = second.join(5)
    assert second_result is not None
    assert second_result.outcome == "succeeded"
    ex.close()


def test_unknown_animation_at_run_time_fails_the_step(runtime: Runtime) -> None:
    loose = builtin_registry()  # no choices: the library refuses when the step runs
    plan = parse_plan(loose, ["play_animation('moonwalk')", "say('after')"])
    result = Executor(runtime).run(plan, timeout=10)
    assert result.outcome == "failed"
    assert result.steps[0].status is StepStatus.FAILED
    assert "moonwalk" in result.steps[0].message
    assert result.steps[1].status is StepStatus.CANCELED
    assert result.feedback is not None
    assert result.feedback.startswith(
        "Robot feedback: Failed to execute [\"play_animation(name='moonwalk')\"], error: "
    )
    assert result.feedback.endswith("; not run: [\"say(text='after')\"]")


def test_stop_action_holds_and_silences(runtime: Runtime, registry: ActionRegistry) -> None:
    runtime.execute(cmd.PlayAnimation(name="LOOKUP_Waving"))
    result = Executor(runtime).run(parse_plan(registry, ["stop"]), timeout=5)
    assert result.outcome == "succeeded"
    assert runtime.engine.wait_until_idle(2)


@pytest.mark.integration  # the benchmark's function: it sleeps in real time into the gesture
def test_interrupt_latency_function_for_the_benchmark(real_time_runtime: Runtime) -> None:
    samples = measure_interrupt_latency(real_time_runtime, trials=3, lead_s=0.02)
    assert len(samples) == 3
    for s in samples:
        assert 0 <= s.held_s < 0.5  # loose: `anima bench agent` reports the real figures
        assert s.held_s <= s.notified_s + 0.011
        assert s.ended_s < 2.0


def test_events_reach_subscribers_on_another_thread(
    runtime: Runtime, registry: ActionRegistry
) -> None:
    seen: list[str] = []
    done = threading.Event()

    def on(e: Event) -> None:
        seen.append(e.kind)
        if isinstance(e, PlanFinished):
            done.set()

    runtime.events.subscribe(on, PlanStarted.kind, ActionStatus.kind, PlanFinished.kind)
    Executor(runtime).run(parse_plan(registry, ["wait(0)"]), timeout=5)
    assert done.wait(2)
    assert seen == ["plan_started", "action_status", "action_status", "plan_finished"]
