"""The simulated Adam's rules: for each command, why it would be refused right now.

Each function returns ``None`` when the command would be accepted, else the reason in one
specific line (wrong mode for this command, value not accepted now, out of range, not finite).
The FSM calls the same function to judge a command and to build the matching enable list, so
the lists and the answers cannot disagree. Callers hold the FSM's lock.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import TYPE_CHECKING, Protocol

from anima.humanoid.spec import (
    CARRY_BOX,
    CONTROL_MODES,
    GAITS,
    MODES,
    MOTIONS,
    NEXT_MODES,
    PICK_UP,
    RL,
    SINGLE_STAND,
    STAND,
    START,
    STOP,
    Range,
    quote,
)

if TYPE_CHECKING:
    from anima.humanoid.dynamics import Gait
    from anima.humanoid.paradigm import ControlParadigm


class SimulatedAdam(Protocol):
    """What the rules read of the simulated robot (:class:`anima.humanoid.fsm.SimulatedAdam`)."""

    mode: str  # the mode reached
    entering: tuple[str, float] | None  # (mode, when it is reached)
    errors: bool  # drive errors latched by an emergency stop
    motion: tuple[str, float] | None  # (stand motion, when it ends)
    carry: tuple[str, float] | None  # (carry-box code, when the move ends)
    holding_box: bool
    closed: bool  # CloseProgram accepted: nothing else is
    motion_files: bool  # whether the motion-capture files are loaded
    gait: Gait
    paradigm: ControlParadigm


def finite(values: Mapping[str, float]) -> str | None:
    for name, value in values.items():
        if not math.isfinite(value):
            return f"{name} is not finite ({value!r})"
    return None


def values(values: Mapping[str, float], ranges: Mapping[str, Range]) -> str | None:
    """The first value that is not finite or out of its range."""
    for name, value in values.items():
        refusal = ranges[name].check(name, value)
        if refusal is not None:
            return refusal
    return None


def busy(adam: SimulatedAdam, now: float) -> str | None:
    """What the body is in the middle of, if anything (only Stop is accepted meanwhile)."""
    if adam.entering:
        mode, until = adam.entering
        return f"still entering {mode} ({until - now:.1f} s left)"
    if adam.motion:
        motion, until = adam.motion
        return f"{motion} is playing ({until - now:.1f} s left)"
    if adam.carry:
        code, until = adam.carry
        return f"carry box {code} ({CARRY_BOX[code][0]}) is running ({until - now:.1f} s left)"
    return None


def gate(adam: SimulatedAdam, now: float) -> str | None:
    """What stops any traditional-control command: closing, RL control, a paradigm switch."""
    if adam.closed:
        return "the robot control program is closing"
    switching = adam.paradigm.switching(now)
    if switching:
        return f"{switching}: wait for GetControlState to confirm"
    if adam.paradigm.mode == RL:
        return "the robot is under RL control: SetControlMode(domain_id=0) for traditional first"
    return None


def mode(adam: SimulatedAdam, target: str, now: float) -> str | None:
    if target not in MODES:
        return f"unknown mode {quote(target)}: modes are {', '.join(MODES)}"
    if target == STOP:  # the emergency stop is never refused while the program runs
        return "the robot control program is closing" if adam.closed else None
    refusal = gate(adam, now) or busy(adam, now)
    if refusal is not None:
        return f"cannot enter {target}: {refusal}"
    if target == adam.mode:
        return f"already in {target}"
    if target not in NEXT_MODES[adam.mode]:
        allowed = ", ".join((*NEXT_MODES[adam.mode], STOP))
        return f"cannot go from {adam.mode} to {target} (from {adam.mode}: {allowed})"
    if target == START and adam.errors:
        return "cannot enter Start: drive errors are latched; SetErrorClear first"
    if adam.mode in GAITS and target == STAND and not adam.gait.at_rest:
        v = adam.gait.value("x_speed")
        return f"cannot enter Stand while moving (x_vel={v:.2f}): SetSpeed 0 and wait"
    if adam.holding_box:
        return f"cannot enter {target} while holding a box: put it down (carry box 0) first"
    return None


def _needs(adam: SimulatedAdam, rpc: str, modes: tuple[str, ...], now: float) -> str | None:
    """Refusal of an RPC that only ``modes`` take (a transition into or out of them counts)."""
    refusal = gate(adam, now)
    if refusal is None and adam.entering and (adam.mode in modes or adam.entering[0] in modes):
        refusal = busy(adam, now)
    if refusal is None and adam.mode not in modes:
        refusal = f"{rpc} needs {' or '.join(modes)}; the robot is in {adam.mode}"
    return None if refusal is None else f"{rpc} refused: {refusal}"


def _in_stand(adam: SimulatedAdam, rpc: str, now: float) -> str | None:
    return _needs(adam, rpc, (STAND,), now)


def stand_motion(adam: SimulatedAdam, motion: str, now: float) -> str | None:
    if motion not in MOTIONS:
        return f"unknown motion {quote(motion)}: motions are {', '.join(MOTIONS)}"
    if not adam.motion_files:
        return "SetStandMotion refused: the motion files are not loaded"
    refusal = _in_stand(adam, "SetStandMotion", now)
    if refusal is not None:
        return refusal
    if adam.motion or adam.carry:
        return f"{motion} refused: {busy(adam, now)}"
    if adam.holding_box:
        return f"{motion} refused: holding a box; put it down (carry box 0) first"
    return None


def carry_box(adam: SimulatedAdam, code: str, now: float) -> str | None:
    if code not in CARRY_BOX:
        return (
            "carry_box must be '0' (put the box down), '1' (squat to carry) or "
            f"'2' (stand to carry), got {quote(code)}"
        )
    refusal = _in_stand(adam, "SetStandCarryBox", now)
    if refusal is not None:
        return refusal
    if adam.motion or adam.carry:
        return f"carry box {code} refused: {busy(adam, now)}"
    if adam.holding_box and code in PICK_UP:
        return f"carry box {code} refused: already holding a box; put it down (0) first"
    if not adam.holding_box and code not in PICK_UP:
        return "carry box 0 refused: no box is held"
    return None


def stand_action(adam: SimulatedAdam, now: float) -> str | None:
    refusal = _in_stand(adam, "SetStandAction", now)
    if refusal is None and (adam.motion or adam.carry):
        refusal = f"SetStandAction refused: {busy(adam, now)}"
    return refusal


def stand_dynamic(adam: SimulatedAdam, now: float) -> str | None:
    return _in_stand(adam, "SetStandDynamic", now)


def gait(adam: SimulatedAdam, rpc: str, now: float) -> str | None:
    return _needs(adam, rpc, GAITS, now)


def clear_errors(adam: SimulatedAdam, flag: bool, now: float) -> str | None:
    if adam.closed:
        return "the robot control program is closing"
    if not flag:
        return "error_clear_flag is false: nothing to do"
    if adam.mode != STOP or adam.entering:
        where = f"entering {adam.entering[0]}" if adam.entering else f"in {adam.mode}"
        return f"SetErrorClear only in Stop; the robot is {where}"
    return None


def close(adam: SimulatedAdam, flag: bool, now: float) -> str | None:
    if adam.closed:
        return "the robot control program is already closing"
    if not flag:
        return "close_flag is false: nothing to do"
    if adam.mode != STOP or adam.entering:
        where = f"entering {adam.entering[0]}" if adam.entering else f"in {adam.mode}"
        return f"CloseProgram only in Stop (the robot would fall); the robot is {where}"
    return None


def control_mode(adam: SimulatedAdam, domain_id: int, now: float) -> str | None:
    if adam.closed:
        return "the robot control program is closing"
    if domain_id not in CONTROL_MODES:
        return f"domain_id must be 0 (traditional) or 1 (RL), got {domain_id}"
    switching = adam.paradigm.switching(now)
    if switching:
        return f"SetControlMode refused: already {switching}"
    if adam.mode in (*GAITS, SINGLE_STAND) or busy(adam, now):
        doing = busy(adam, now) or f"the robot is in {adam.mode}"
        return f"SetControlMode refused: switch only at rest (Stop, Start, Zero, Stand); {doing}"
    return None


def describe(adam: SimulatedAdam, now: float) -> str:
    """GetRobotState.message: what the robot is doing or waiting for."""
    if adam.closed:
        return "the robot control program is closing"
    doing = busy(adam, now) or adam.paradigm.switching(now)
    if doing:
        return doing
    if adam.paradigm.mode == RL:
        return f"in {adam.mode}, under RL control: SetControlMode(0) for traditional"
    if adam.mode == STOP:
        return "drive errors latched: SetErrorClear" if adam.errors else "drives off: SetMode Start"
    return f"in {adam.mode}"
