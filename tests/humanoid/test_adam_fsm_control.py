"""The simulated Adam: control-paradigm switch, CloseProgram, and enable lists that never lie."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from anima.humanoid.fsm import SimulatedAdam
from anima.humanoid.spec import (
    CARRY_BOX,
    CONTROL_FEEDBACK_S,
    CONTROL_SWITCH_S,
    MODES,
    MOTIONS,
    STAND,
    START,
    STOP,
    WALK,
    ZERO,
)
from anima.testing import FakeClock

pytestmark = pytest.mark.fast

WalkTo = Callable[[str], None]


def test_control_state_is_minus_one_until_the_first_feedback(
    adam: SimulatedAdam, clock: FakeClock
) -> None:
    assert adam.control_state() == -1
    assert adam.state().current_control_mode == -1
    clock.advance(CONTROL_FEEDBACK_S)
    assert adam.control_state() == 0
    assert adam.state().current_control_mode == 0


def test_set_control_mode_returns_at_once_and_completes_later(
    adam: SimulatedAdam, clock: FakeClock, walk_to: WalkTo
) -> None:
    walk_to(STAND)
    reply, current = adam.set_control_mode(1)
    assert reply.success
    assert "poll GetControlState" in reply.message
    assert current == 0  # the last known mode, not the one asked for
    clock.advance(CONTROL_SWITCH_S - 0.1)
    assert adam.control_state() == 0
    s = adam.state()
    assert s.mode_enable_list == (STOP,)  # nothing but Stop while the controllers hand over
    assert s.motion_enable_list == ()
    assert "switching to RL control" in adam.stand_motion("Greeting").message
    clock.advance(0.1)
    assert adam.control_state() == 1
    s = adam.state()
    assert s.current_control_mode == 1
    assert s.mode_enable_list == (STOP,)  # under RL the traditional FSM takes only Stop
    assert "under RL control" in adam.set_mode(WALK).message
    assert adam.set_control_mode(0)[0].success
    clock.advance(CONTROL_SWITCH_S)
    assert adam.control_state() == 0
    assert WALK in adam.state().mode_enable_list


def test_set_control_mode_refusals(adam: SimulatedAdam, clock: FakeClock, walk_to: WalkTo) -> None:
    reply, current = adam.set_control_mode(7)
    assert reply.message == "domain_id must be 0 (traditional) or 1 (RL), got 7"
    assert current == -1
    assert adam.set_control_mode(0)[0].message == "already in traditional control"
    walk_to(WALK)
    assert "switch only at rest" in adam.set_control_mode(1)[0].message
    adam.set_mode(STOP)
    assert adam.set_control_mode(1)[0].success
    assert "already switching" in adam.set_control_mode(0)[0].message


def test_stop_is_accepted_even_under_rl(adam: SimulatedAdam, clock: FakeClock) -> None:
    adam.set_control_mode(1)
    clock.advance(CONTROL_SWITCH_S)
    assert adam.set_mode(STOP).success


def test_close_program_only_in_stop(adam: SimulatedAdam, walk_to: WalkTo) -> None:
    walk_to(ZERO)
    assert adam.close(True).message == (
        "CloseProgram only in Stop (the robot would fall); the robot is in Zero"
    )
    adam.set_mode(STOP)
    assert adam.close(False).message == "close_flag is false: nothing to do"
    assert adam.close(True).success
    assert adam.set_mode(STOP).message == "the robot control program is closing"
    assert adam.clear_errors(True).message == "the robot control program is closing"
    s = adam.state()
    assert s.mode_enable_list == ()
    assert s.message == "the robot control program is closing"


# --- every enable list says exactly what the next command would get ---------------------------
COMMANDS = st.one_of(
    st.tuples(st.just("mode"), st.sampled_from(MODES)),
    st.tuples(st.just("motion"), st.sampled_from(tuple(MOTIONS))),
    st.tuples(st.just("carry"), st.sampled_from(tuple(CARRY_BOX))),
    st.tuples(st.just("posture"), st.just("")),
    st.tuples(st.just("dynamic"), st.just("")),
    st.tuples(st.just("clear"), st.just("")),
    st.tuples(st.just("control"), st.sampled_from(("0", "1"))),
    st.tuples(st.just("speed"), st.just("")),
)
STEPS = st.lists(st.tuples(COMMANDS, st.sampled_from((0.0, 0.3, 1.0, 2.5, 6.0))), max_size=40)


@settings(max_examples=150, deadline=None)
@given(steps=STEPS)
def test_enable_lists_match_what_is_accepted(
    steps: list[tuple[tuple[str, str], float]],
) -> None:
    clock = FakeClock()
    adam = SimulatedAdam(clock)
    # a head start along the documented flow, so the random walk reaches the deep states
    for mode in (START, ZERO, STAND):
        adam.set_mode(mode)
        clock.advance(3.0)
    for (kind, arg), dt in steps:
        s = adam.state()
        if kind == "mode":
            assert adam.set_mode(arg).success == (arg in s.mode_enable_list)
        elif kind == "motion":
            assert adam.stand_motion(arg).success == (arg in s.motion_enable_list)
        elif kind == "carry":
            assert adam.carry_box(arg).success == (arg in s.carrybox_enable_list)
        elif kind == "posture":
            assert adam.stand_action(0.05, 0.0, 0.1, -0.1).success == bool(s.action_enable_list)
        elif kind == "dynamic":
            assert adam.stand_dynamic(True).success == bool(s.balance_control_enable)
        elif kind == "clear":
            # in Stop and not on its way out of it (a SetMode Start under way: "still entering")
            idle_in_stop = s.fsm_name == STOP and not s.message.startswith("still entering")
            assert adam.clear_errors(True).success == idle_in_stop
        elif kind == "control":
            adam.set_control_mode(int(arg))
        else:
            ok = adam.set_speed(0.3, 0.0, 0.0, False).success
            assert ok == (s.fsm_name in ("Walk", "Run") and s.mode_enable_list != (STOP,))
        clock.advance(dt)
