"""The simulated Adam's FSM on a fake clock: every documented rule, with exact times."""

from __future__ import annotations

import math
from collections.abc import Callable

import pytest

from anima.humanoid.fsm import SimulatedAdam
from anima.humanoid.spec import (
    ACTIONS,
    CARRY_BOX,
    ENTER_S,
    MODES,
    MOTIONS,
    NEXT_MODES,
    RUN,
    SINGLE_STAND,
    STAND,
    STAND_LISTS,
    START,
    STOP,
    WALK,
    ZERO,
)
from anima.testing import FakeClock

pytestmark = pytest.mark.fast

WalkTo = Callable[[str], None]


def test_starts_in_stop_with_drives_off(adam: SimulatedAdam) -> None:
    s = adam.state()
    assert s.fsm_name == STOP
    assert s.mode_enable_list == (START, STOP)
    assert s.motion_enable_list == s.action_enable_list == s.carrybox_enable_list == ()
    assert s.balance_control_enable == ""
    assert s.motion_files_enable
    assert "SetMode Start" in s.message


def test_the_fixed_lists() -> None:
    assert STAND_LISTS.mode_list == ("Start", "Zero", "Stand", "Walk", "Run", "SingleStand", "Stop")
    assert STAND_LISTS.motion_list == (
        "Greeting",
        "Chest Expansion",
        "Stretching",
        "Gentleman's Salute",
    )
    assert STAND_LISTS.carrybox_list == ("0", "1", "2")
    assert STAND_LISTS.balance_control == "DynamicStand"


def test_the_documented_flow_takes_simulated_time(adam: SimulatedAdam, clock: FakeClock) -> None:
    for mode, previous in ((START, STOP), (ZERO, START), (STAND, ZERO)):
        reply = adam.set_mode(mode)
        assert reply.success, reply.message
        clock.advance(ENTER_S[mode] - 0.01)
        s = adam.state()
        assert s.fsm_name == previous  # a mode shows once reached
        assert s.mode_enable_list == (STOP,)  # meanwhile only Stop is accepted
        assert f"still entering {mode}" in s.message
        clock.advance(0.01)
        assert adam.state().fsm_name == mode
    s = adam.state()
    assert s.mode_enable_list == (WALK, RUN, SINGLE_STAND, STOP)
    assert s.motion_enable_list == tuple(MOTIONS)
    assert s.action_enable_list == ACTIONS
    assert s.carrybox_enable_list == ("1", "2")
    assert s.balance_control_enable == "DynamicStand"


def test_a_command_during_a_transition_says_so(adam: SimulatedAdam, clock: FakeClock) -> None:
    adam.set_mode(START)
    clock.advance(0.4)
    reply = adam.set_mode(ZERO)
    assert not reply.success
    assert reply.message == "cannot enter Zero: still entering Start (0.6 s left)"


def test_unknown_and_unreachable_modes_are_refused_by_name(
    adam: SimulatedAdam, walk_to: WalkTo
) -> None:
    reply = adam.set_mode("Fly")
    assert not reply.success
    assert reply.message.startswith("unknown mode 'Fly': modes are Start, Zero, Stand")
    walk_to(ZERO)
    reply = adam.set_mode(WALK)
    assert not reply.success
    assert reply.message == "cannot go from Zero to Walk (from Zero: Stand, Stop)"
    assert adam.set_mode(ZERO).message == "already in Zero"


def test_a_huge_mode_name_gets_a_short_answer(adam: SimulatedAdam) -> None:
    reply = adam.set_mode("x" * 1_000_000)
    assert not reply.success
    assert len(reply.message) < 200


@pytest.mark.parametrize("mode", [m for m in MODES if m != STOP])
def test_stop_is_reachable_from_every_mode_and_latches_errors(
    adam: SimulatedAdam, clock: FakeClock, walk_to: WalkTo, mode: str
) -> None:
    walk_to(mode)
    reply = adam.set_mode(STOP)
    assert reply.success
    s = adam.state()
    assert s.fsm_name == STOP
    assert s.x_vel == s.y_vel == s.yaw_vel == 0.0
    assert s.mode_enable_list == (STOP,)  # Start waits for SetErrorClear
    assert adam.set_mode(START).message == (
        "cannot enter Start: drive errors are latched; SetErrorClear first"
    )
    assert adam.clear_errors(True).message == "drive errors cleared"
    assert adam.state().mode_enable_list == (START, STOP)
    assert adam.clear_errors(True).message == "no drive errors to clear"


def test_stop_interrupts_a_transition_and_a_motion(
    adam: SimulatedAdam, clock: FakeClock, walk_to: WalkTo
) -> None:
    adam.set_mode(START)
    clock.advance(0.5)
    assert adam.set_mode(STOP).success
    clock.advance(5.0)
    assert adam.state().fsm_name == STOP
    adam.clear_errors(True)
    walk_to(STAND)
    adam.stand_motion("Stretching")
    assert adam.set_mode(STOP).success
    assert adam.state().current_motion == ""


def test_stop_in_stop_is_accepted_and_harmless(adam: SimulatedAdam) -> None:
    reply = adam.set_mode(STOP)
    assert reply == reply.__class__(True, "already in Stop")
    assert adam.state().mode_enable_list == (START, STOP)


def test_error_clear_only_in_stop(adam: SimulatedAdam, walk_to: WalkTo) -> None:
    walk_to(STAND)
    reply = adam.clear_errors(True)
    assert not reply.success
    assert reply.message == "SetErrorClear only in Stop; the robot is in Stand"
    adam.set_mode(STOP)
    assert adam.clear_errors(False).message == "error_clear_flag is false: nothing to do"
    assert adam.clear_errors(True).message == "drive errors cleared"


@pytest.mark.parametrize(("motion", "seconds"), MOTIONS.items())
def test_stand_motions_play_for_their_time(
    adam: SimulatedAdam, clock: FakeClock, walk_to: WalkTo, motion: str, seconds: float
) -> None:
    walk_to(STAND)
    assert adam.stand_motion(motion).success
    clock.advance(seconds - 0.1)
    s = adam.state()
    assert s.current_motion == motion
    assert s.motion_enable_list == s.carrybox_enable_list == s.action_enable_list == ()
    assert s.mode_enable_list == (STOP,)
    other = "Greeting" if motion != "Greeting" else "Stretching"
    assert adam.stand_motion(other).message == f"{other} refused: {motion} is playing (0.1 s left)"
    clock.advance(0.1)
    s = adam.state()
    assert s.current_motion == ""
    assert s.motion_enable_list == tuple(MOTIONS)


def test_stand_motion_needs_stand_and_a_known_name(adam: SimulatedAdam, walk_to: WalkTo) -> None:
    walk_to(ZERO)
    assert adam.stand_motion("Greeting").message == (
        "SetStandMotion refused: SetStandMotion needs Stand; the robot is in Zero"
    )
    walk_to_stand = adam.set_mode(STAND)
    assert walk_to_stand.success
    assert adam.stand_motion("Moonwalk").message.startswith("unknown motion 'Moonwalk'")


def test_no_motion_files_no_motions(clock: FakeClock) -> None:
    adam = SimulatedAdam(clock, motion_files=False)
    for mode in (START, ZERO, STAND):
        adam.set_mode(mode)
        clock.advance(ENTER_S[mode])
    s = adam.state()
    assert not s.motion_files_enable
    assert s.motion_enable_list == ()
    assert "motion files are not loaded" in adam.stand_motion("Greeting").message


def test_carry_box_cycle(adam: SimulatedAdam, clock: FakeClock, walk_to: WalkTo) -> None:
    walk_to(STAND)
    assert adam.carry_box("0").message == "carry box 0 refused: no box is held"
    assert adam.carry_box("1").success
    s = adam.state()
    assert s.current_motion == "CarryBox 1: squat to carry"
    assert s.carrybox_enable_list == ()
    clock.advance(CARRY_BOX["1"][1])
    s = adam.state()
    assert s.current_motion == ""
    assert s.carrybox_enable_list == ("0",)  # holding: only put down
    assert s.motion_enable_list == ()  # hands are busy
    assert s.mode_enable_list == (STOP,)  # put the box down before leaving Stand
    assert "holding a box" in adam.set_mode(WALK).message
    assert "already holding a box" in adam.carry_box("2").message
    assert adam.carry_box("0").success
    clock.advance(CARRY_BOX["0"][1])
    assert adam.state().carrybox_enable_list == ("1", "2")
    assert adam.carry_box("9").message.startswith("carry_box must be '0'")


def test_posture_ranges(adam: SimulatedAdam, walk_to: WalkTo) -> None:
    walk_to(STAND)
    assert adam.stand_action(0.1, -0.06, 0.25, -0.2).success
    assert adam.stand_action(-0.1, 0.06, -0.25, 0.0).success
    cases = {
        (0.11, 0, 0, 0): "stand_pitch=0.11 is out of range [-0.1, 0.1] rad",
        (0, 0.07, 0, 0): "stand_roll=0.07 is out of range [-0.06, 0.06] rad",
        (0, 0, -0.3, 0): "stand_yaw=-0.3 is out of range [-0.25, 0.25] rad",
        (0, 0, 0, 0.01): "stand_height=0.01 is out of range [-0.2, 0] m",
        (0, 0, 0, math.nan): "stand_height is not finite (nan)",
        (math.inf, 0, 0, 0): "stand_pitch is not finite (inf)",
    }
    for args, message in cases.items():
        reply = adam.stand_action(*args)
        assert reply == reply.__class__(False, message)


def test_posture_follows_at_a_rate_and_is_reported(
    adam: SimulatedAdam, clock: FakeClock, walk_to: WalkTo
) -> None:
    walk_to(STAND)
    reply = adam.stand_action(0.1, 0.0, -0.25, -0.2)
    assert reply.message.endswith("reached in 2.0 s")  # height: 0.2 m at 0.1 m/s
    clock.advance(0.5)
    s = adam.state()
    assert s.stand_pitch == pytest.approx(0.05)
    assert s.stand_yaw == pytest.approx(-0.125)
    assert s.stand_height == pytest.approx(-0.05)
    assert s.current_action_list == ("stand_pitch", "stand_yaw", "stand_height")
    clock.advance(0.5)
    assert adam.state().current_action_list == ("stand_height",)
    clock.advance(1.0)
    s = adam.state()
    assert (s.stand_pitch, s.stand_roll, s.stand_yaw, s.stand_height) == (0.1, 0.0, -0.25, -0.2)
    assert s.current_action_list == ()
    adam.set_mode(WALK)  # leaving Stand: back to neutral at the same rates
    clock.advance(3.0)
    s = adam.state()
    assert (s.stand_pitch, s.stand_yaw, s.stand_height) == (0.0, 0.0, 0.0)


def test_posture_refused_outside_stand_and_during_a_motion(
    adam: SimulatedAdam, walk_to: WalkTo
) -> None:
    assert "needs Stand; the robot is in Stop" in adam.stand_action(0, 0, 0, 0).message
    walk_to(STAND)
    adam.stand_motion("Greeting")
    assert "Greeting is playing" in adam.stand_action(0, 0, 0, 0).message


def test_dynamic_balance(adam: SimulatedAdam, walk_to: WalkTo) -> None:
    assert "needs Stand" in adam.stand_dynamic(True).message
    walk_to(STAND)
    assert adam.stand_dynamic(True).message == "dynamic balance on"
    assert adam.state().balance_control_state
    assert adam.stand_dynamic(False).success
    assert not adam.state().balance_control_state


def test_speed_only_in_walk_or_run(adam: SimulatedAdam, walk_to: WalkTo) -> None:
    walk_to(STAND)
    assert adam.set_speed(0.2, 0, 0, False).message == (
        "SetSpeed refused: SetSpeed needs Walk or Run; the robot is in Stand"
    )
    adam.set_mode(WALK)
    assert "still entering Walk" in adam.set_speed(0.2, 0, 0, False).message


def test_speed_ranges_depend_on_the_gait(
    adam: SimulatedAdam, clock: FakeClock, walk_to: WalkTo
) -> None:
    walk_to(WALK)
    assert adam.set_speed(1.5, 0, 0, False).message == ("x_speed=1.5 is out of range [-0.5, 1] m/s")
    assert adam.set_speed(0, 0, math.nan, False).message == "yaw_speed is not finite (nan)"
    adam.set_mode(RUN)
    clock.advance(ENTER_S[RUN])
    assert adam.set_speed(1.5, 0, 0, False).success


def test_velocity_ramps_and_lapses_after_5_s(
    adam: SimulatedAdam, clock: FakeClock, walk_to: WalkTo
) -> None:
    walk_to(WALK)
    assert adam.set_speed(0.8, -0.3, 0.5, False).message == "speed x=0.8 y=-0.3 yaw=0.5 for 5 s"
    clock.advance(0.25)
    s = adam.state()
    assert (s.x_vel, s.y_vel, s.yaw_vel) == pytest.approx((0.25, -0.15, 0.5))
    clock.advance(4.74)  # 4.99 s after the command: still held
    assert adam.state().x_vel == pytest.approx(0.8)
    assert STAND not in adam.state().mode_enable_list  # moving: no Stand
    clock.advance(0.01 + 0.3)  # lapsed 0.3 s ago: ramping down at 1 m/s²
    assert adam.state().x_vel == pytest.approx(0.5)
    clock.advance(1.0)
    s = adam.state()
    assert (s.x_vel, s.y_vel, s.yaw_vel) == (0.0, 0.0, 0.0)
    assert STAND in s.mode_enable_list  # at rest: Stand again


def test_continuous_speed_does_not_lapse(
    adam: SimulatedAdam, clock: FakeClock, walk_to: WalkTo
) -> None:
    walk_to(WALK)
    assert adam.set_speed(0.5, 0, 0, True).message.endswith("until changed")
    clock.advance(60.0)
    assert adam.state().x_vel == 0.5
    adam.set_speed(0.0, 0, 0, True)
    clock.advance(1.0)
    assert adam.state().x_vel == 0.0


def test_a_new_speed_restarts_the_5_s(
    adam: SimulatedAdam, clock: FakeClock, walk_to: WalkTo
) -> None:
    walk_to(WALK)
    adam.set_speed(0.4, 0, 0, False)
    clock.advance(4.0)
    adam.set_speed(0.4, 0, 0, False)
    clock.advance(4.0)
    assert adam.state().x_vel == 0.4


def test_calling_often_or_rarely_gives_the_same_state(clock: FakeClock) -> None:
    """Time advances event by event, so polling does not change the simulation."""
    rare, often = SimulatedAdam(clock), SimulatedAdam(clock)
    for a in (rare, often):
        for mode in (START, ZERO, STAND, WALK):
            a.set_mode(mode)
            clock.advance(ENTER_S[mode])
    for a in (rare, often):
        a.set_speed(1.0, 0.3, -1.0, False)
    for _ in range(700):
        clock.advance(0.01)
        often.state()
    assert rare.state() == often.state()


def test_unigait_com_in_gaits_only(adam: SimulatedAdam, walk_to: WalkTo) -> None:
    assert "needs Walk or Run" in adam.unigait_com(True).message
    walk_to(RUN)
    assert adam.unigait_com(True).success
    assert adam.state().current_action_list == ("AutoUnigaitCOM",)
    adam.unigait_com(False)
    assert adam.state().current_action_list == ()


def test_single_stand_and_back(adam: SimulatedAdam, clock: FakeClock, walk_to: WalkTo) -> None:
    walk_to(SINGLE_STAND)
    assert adam.state().mode_enable_list == (STAND, STOP)
    assert adam.set_mode(STAND).success
    clock.advance(ENTER_S[STAND])
    assert adam.state().fsm_name == STAND


def test_every_listed_mode_is_reachable_as_documented() -> None:
    assert NEXT_MODES[STAND] == (WALK, RUN, SINGLE_STAND)
    assert NEXT_MODES[WALK] == (STAND, RUN)
