"""What the simulated Adam is: its modes, motions, ranges and timings, and the values it reports.

Pure data, shared by the simulated humanoid (:mod:`anima.humanoid.fsm`), the gRPC server and the
client, so a range or a name is written down once. The names, the posture ranges and the
carry-box codes are the vendor's (seed 004); the durations, speed limits and rates are this
simulation's own plausible values, documented in ``docs/grpc.md``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

# what ReadHumanoidState gives lives with the commands (a floor below): re-exported, as its own
# name says to mypy
from anima.commands import RobotState as RobotState  # noqa: PLC0414

# --- FSM modes ----------------------------------------------------------------------------------
START, ZERO, STAND, WALK, RUN, SINGLE_STAND, STOP = (
    "Start",
    "Zero",
    "Stand",
    "Walk",
    "Run",
    "SingleStand",
    "Stop",
)
MODES: tuple[str, ...] = (START, ZERO, STAND, WALK, RUN, SINGLE_STAND, STOP)
GAITS: tuple[str, ...] = (WALK, RUN)  # the modes that take SetSpeed and AutoUnigaitCOM

# Where each mode may go next (Stop is reachable from anywhere and is not repeated here).
NEXT_MODES: dict[str, tuple[str, ...]] = {
    STOP: (START,),  # drives off; Start only once no drive error is latched
    START: (ZERO,),  # drives on, hanging: calibrate first
    ZERO: (STAND,),  # calibrated
    STAND: (WALK, RUN, SINGLE_STAND),
    WALK: (STAND, RUN),  # Stand only once the robot has come to rest
    RUN: (WALK, STAND),  # Stand only once the robot has come to rest
    SINGLE_STAND: (STAND,),
}

# Simulated seconds to enter each mode; the enable lists shrink to ["Stop"] meanwhile.
ENTER_S: dict[str, float] = {
    START: 1.0,  # drives power up
    ZERO: 3.0,  # joint calibration
    STAND: 2.0,  # stand up (or settle from a gait)
    WALK: 1.0,
    RUN: 1.5,
    SINGLE_STAND: 1.5,  # shift the weight onto one leg
    STOP: 0.0,  # an emergency stop is immediate
}

# --- Stand motions and carry-box states ---------------------------------------------------------
# Motion-capture motions in Stand and how long each plays, seconds.
MOTIONS: dict[str, float] = {
    "Greeting": 4.0,
    "Chest Expansion": 8.0,
    "Stretching": 10.0,
    "Gentleman's Salute": 5.0,
}

# SetStandCarryBox codes: label and how long the move takes, seconds.
CARRY_BOX: dict[str, tuple[str, float]] = {
    "0": ("put the box down", 3.0),
    "1": ("squat to carry", 4.0),
    "2": ("stand to carry", 3.0),
}
PICK_UP: tuple[str, ...] = ("1", "2")
PUT_DOWN: tuple[str, ...] = ("0",)

BALANCE_CONTROL = "DynamicStand"  # GetStandList.balance_control: the one balance feature
UNIGAIT_COM = "AutoUnigaitCOM"  # shown in current_action_list while COM balancing is on


# --- Ranges -------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Range:
    """A closed interval of accepted values, with the unit used in messages."""

    low: float
    high: float
    unit: str

    def check(self, name: str, value: float) -> str | None:
        """``None`` when ``value`` is accepted, else the reason in one line."""
        if not math.isfinite(value):
            return f"{name} is not finite ({value!r})"
        if not self.low <= value <= self.high:
            return f"{name}={value:g} is out of range [{self.low:g}, {self.high:g}] {self.unit}"
        return None


# SetStandAction posture ranges (vendor) and how fast the body follows a new target (simulation).
POSTURE: dict[str, Range] = {
    "stand_pitch": Range(-0.1, 0.1, "rad"),
    "stand_roll": Range(-0.06, 0.06, "rad"),
    "stand_yaw": Range(-0.25, 0.25, "rad"),
    "stand_height": Range(-0.2, 0.0, "m"),
}
POSTURE_RATE: dict[str, float] = {  # per second
    "stand_pitch": 0.1,
    "stand_roll": 0.06,
    "stand_yaw": 0.25,
    "stand_height": 0.1,
}
ACTIONS: tuple[str, ...] = tuple(POSTURE)  # GetStandList.action_list: the posture axes

# SetSpeed limits per gait (simulation) and the velocity ramp, units per second squared.
SPEED: dict[str, dict[str, Range]] = {
    WALK: {
        "x_speed": Range(-0.5, 1.0, "m/s"),
        "y_speed": Range(-0.3, 0.3, "m/s"),
        "yaw_speed": Range(-1.0, 1.0, "rad/s"),
    },
    RUN: {
        "x_speed": Range(-0.5, 2.5, "m/s"),
        "y_speed": Range(-0.3, 0.3, "m/s"),
        "yaw_speed": Range(-1.0, 1.0, "rad/s"),
    },
}
ACCEL: dict[str, float] = {"x_speed": 1.0, "y_speed": 0.6, "yaw_speed": 2.0}
SPEED_LAPSE_S = 5.0  # a SetSpeed without continous holds this long, then the target returns to 0
AT_REST = 1e-9  # |velocity| below this counts as standing still

# --- Control paradigm ---------------------------------------------------------------------------
TRADITIONAL, RL = 0, 1
NO_FEEDBACK = -1  # GetControlState.domain_id before the first feedback
CONTROL_MODES: dict[int, str] = {TRADITIONAL: "traditional", RL: "RL"}
CONTROL_FEEDBACK_S = 1.0  # the first control-mode feedback arrives this long after start-up
CONTROL_SWITCH_S = 3.0  # a SetControlMode takes this long to show in the feedback


# --- What the robot reports: RobotState, in anima.commands (what ReadHumanoidState gives) --------


@dataclass(frozen=True, kw_only=True)
class StandLists:
    """The fixed lists: the fields of ``GetStandListResponse``."""

    mode_list: tuple[str, ...]
    motion_list: tuple[str, ...]
    action_list: tuple[str, ...]
    carrybox_list: tuple[str, ...]
    balance_control: str


STAND_LISTS = StandLists(
    mode_list=MODES,
    motion_list=tuple(MOTIONS),
    action_list=ACTIONS,
    carrybox_list=tuple(sorted(CARRY_BOX)),
    balance_control=BALANCE_CONTROL,
)


@dataclass(frozen=True)
class Reply:
    """The answer to a command: accepted or not, and why, in one line."""

    success: bool
    message: str


def quote(text: str, limit: int = 40) -> str:
    """``text`` quoted for a message, cut so a huge input cannot make a huge answer."""
    return repr(text if len(text) <= limit else text[:limit] + "…")
