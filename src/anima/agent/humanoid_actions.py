"""Actions for a humanoid (the Adam robot): walk, turn, stop walking, stand motions, posture.

They are written against :class:`Humanoid`, the calls they need, so they work with
:class:`~anima.humanoid.client.AdamClient` (which checks the robot's enable lists before each
command) and with any stand-in that has the same methods. A refusal by the robot (a motion not
allowed now) fails the step with the robot's reason, which goes back to the planner.

Bring-up: the robot starts with its drives off (Stop), and walking needs Walk, which the vendor's
flow reaches through Start → Zero (calibration) → Stand → Walk. Each action first brings the
robot to the mode it needs (:func:`bring_up`): one SetMode at a time, each sent once the robot
lists it in ``mode_enable_list`` and followed by polling GetRobotState until ``fsm_name`` shows
it reached — bounded (:data:`MODE_TIMEOUT_S` per mode) and woken at once by the plan's cancel.
It never clears an emergency stop: with drive errors latched, or the runtime's own emergency
stop on, the step fails with that reason ("the robot is in emergency stop") and nothing is sent.

Walking is timed: ``walk_forward(seconds=2)`` sets a continuous speed, waits on the plan's
cancel event, and always sets the speed back to zero, whether the time ran out or the plan was
interrupted.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable
from typing import Literal

from anima.agent.actions import ActionRegistry, ActionResult, make_action
from anima.agent.builtins import halt
from anima.agent.context import ActionContext
from anima.agent.phrases import Phrase
from anima.errors import AnimaError
from anima.humanoid.commanded import HumanoidControl
from anima.humanoid.spec import (
    GAITS,
    MOTIONS,
    NEXT_MODES,
    POSTURE,
    STAND,
    START,
    STOP,
    WALK,
    RobotState,
)

log = logging.getLogger(__name__)


Humanoid = HumanoidControl  # what the actions call (anima.humanoid.commanded)

_SECONDS = (0.1, 30.0)  # one walking step of a plan, seconds
MODE_TIMEOUT_S = 15.0  # longest wait for one mode (the sim's calibration takes 3 s)
POLL_S = 0.05  # GetRobotState while a mode is being entered (a loopback call is ~1 ms)
ESTOP = "the robot is in emergency stop"


class BringUpError(Exception):
    """The robot could not be brought to the mode an action needs; the message says why, in
    words the person may hear ("the robot is in emergency stop")."""


def mode_path(start: str, target: str) -> list[str]:
    """The modes to enter, in order, from ``start`` to ``target`` (the vendor's FSM, shortest
    way); [] when already there. BringUpError when the FSM has no way."""
    if start == target:
        return []
    paths: dict[str, list[str]] = {start: []}
    frontier = [start]
    while frontier:
        later: list[str] = []
        for mode in frontier:
            for nxt in NEXT_MODES.get(mode, ()):
                if nxt not in paths:
                    paths[nxt] = [*paths[mode], nxt]
                    if nxt == target:
                        return paths[nxt]
                    later.append(nxt)
        frontier = later
    raise BringUpError(f"the robot cannot go from {start} to {target}")


def bring_up(
    ctx: ActionContext, robot: Humanoid, target: str, *, accept: tuple[str, ...] = ()
) -> str:
    """Bring ``robot`` to ``target`` (or leave it in one of ``accept``); the mode it is in.

    BringUpError with a short reason when it cannot: an emergency stop (the runtime's, or
    drive errors latched on the robot: never cleared here), a mode that is not reached within
    :data:`MODE_TIMEOUT_S`, a refusal, or the plan's cancel.
    """
    s = _state(ctx, robot)
    if s.fsm_name == target or s.fsm_name in accept:
        return s.fsm_name
    for mode in mode_path(s.fsm_name, target):
        _wait(ctx, robot, mode, _accepts(mode), f"accept {mode}")
        try:
            robot.set_mode(mode)
        except AnimaError as exc:
            raise BringUpError(f"the robot refused to enter {mode} ({exc})") from None
        log.info("humanoid bring-up: entering %s on the way to %s", mode, target)
        _wait(ctx, robot, mode, _reached(mode), f"reach {mode}")
    return target


def _accepts(mode: str) -> Callable[[RobotState], bool]:
    return lambda s: mode in s.mode_enable_list


def _reached(mode: str) -> Callable[[RobotState], bool]:
    return lambda s: s.fsm_name == mode


def _state(ctx: ActionContext, robot: Humanoid) -> RobotState:
    if ctx.robot.estopped:
        raise BringUpError(ESTOP)
    try:
        return robot.state()
    except AnimaError as exc:
        raise BringUpError(f"the robot does not answer ({exc})") from None


def _wait(
    ctx: ActionContext,
    robot: Humanoid,
    mode: str,
    ready: Callable[[RobotState], bool],
    what: str,
) -> None:
    """Poll the robot's state until ``ready``; BringUpError on an emergency stop (the robot
    falling back to Stop on the way, or drive errors latched), the deadline, or a cancel."""
    clock = ctx.robot.clock
    deadline = clock.now() + MODE_TIMEOUT_S
    while True:
        s = _state(ctx, robot)
        if ready(s):
            return
        if s.fsm_name == STOP and (mode != START or "error" in s.message):
            # back in Stop on the way up, or Stop with drive errors latched: an emergency stop
            # the agent must not undo (only an operator clears it, with SetErrorClear)
            raise BringUpError(f"{ESTOP} ({s.message})" if s.message else ESTOP)
        if clock.now() >= deadline:
            raise BringUpError(
                f"the robot did not {what} within {MODE_TIMEOUT_S:g} s ({s.message or s.fsm_name})"
            )
        if not ctx.sleep(POLL_S):
            raise BringUpError("interrupted")


def register_humanoid(registry: ActionRegistry, robot: Humanoid) -> None:
    """Add the humanoid actions for ``robot``; ``stop`` also stops its walking."""

    def move(ctx: ActionContext, x: float, y: float, yaw: float, seconds: float) -> ActionResult:
        try:
            bring_up(ctx, robot, WALK, accept=GAITS)
        except BringUpError as exc:
            return (False, str(exc))
        try:
            robot.speed(x, y, yaw, continuous=True)
        except AnimaError as exc:
            return (False, str(exc))
        try:
            if not ctx.sleep(seconds):
                return (False, "interrupted")
        finally:
            _stand_still(robot)
        return True

    def walk_forward(ctx: ActionContext, seconds: float = 2.0, speed: float = 0.3) -> ActionResult:
        """Walk forward for a while, then stand still (the robot is brought up to Walk first).

        Args:
            seconds: how long to walk
            speed: metres per second
        """
        return move(ctx, speed, 0.0, 0.0, seconds)

    def walk_backward(ctx: ActionContext, seconds: float = 2.0, speed: float = 0.2) -> ActionResult:
        """Walk backward for a while, then stand still (the robot is brought up to Walk first).

        Args:
            seconds: how long to walk
            speed: metres per second
        """
        return move(ctx, -speed, 0.0, 0.0, seconds)

    def turn(
        ctx: ActionContext,
        direction: Literal["left", "right"],
        seconds: float = 2.0,
        rate: float = 0.5,
    ) -> ActionResult:
        """Turn on the spot for a while, then stand still (the robot is brought up first).

        Args:
            direction: left or right
            seconds: how long to turn
            rate: radians per second
        """
        return move(ctx, 0.0, 0.0, rate if direction == "left" else -rate, seconds)

    def stop_walking(ctx: ActionContext) -> ActionResult:
        """Stop walking or turning now."""
        _stand_still(robot)  # outside a gait nothing walks: nothing to stop
        return True

    def set_gait(ctx: ActionContext, mode: Literal["Stand", "Walk", "Run"]) -> ActionResult:
        """Switch the humanoid's mode: Stand (still, for stand motions and posture), Walk or Run;
        from a fresh start the robot is brought up through Start, Zero and Stand.

        Args:
            mode: Stand, Walk or Run
        """
        try:
            return (True, f"in {bring_up(ctx, robot, mode)}")
        except BringUpError as exc:
            return (False, str(exc))

    def standing(ctx: ActionContext, call: Callable[[], str]) -> ActionResult:
        try:
            bring_up(ctx, robot, STAND)
        except BringUpError as exc:
            return (False, str(exc))
        return (True, call())

    def stand_motion(ctx: ActionContext, name: str) -> ActionResult:
        """Play a whole-body motion while standing (the robot is brought to Stand first).

        Args:
            name: the motion
        """
        return standing(ctx, lambda: robot.stand_motion(name))

    def posture(
        ctx: ActionContext,
        pitch: float = 0.0,
        roll: float = 0.0,
        yaw: float = 0.0,
        height: float = 0.0,
    ) -> ActionResult:
        """Lean, twist or crouch the standing body; all zero is the neutral stance.

        Args:
            pitch: lean forward (positive) or back, radians
            roll: lean sideways, radians
            yaw: twist the torso, radians
            height: crouch, metres below full height (0 or negative)
        """
        return standing(ctx, lambda: robot.posture(pitch, roll, yaw, height))

    def stop(ctx: ActionContext) -> ActionResult:
        """Stop: walking stops, the current gesture eases to a hold, speech is dropped."""
        halt(ctx)
        _stand_still(robot)
        return True

    speeds = {"speed": (0.05, 1.0)}
    actions = [
        make_action(
            walk_forward,
            phrases=(
                "walk forward",
                "walk",
                "go forward",
                Phrase("walk forward {seconds} seconds"),
            ),
            bounds={"seconds": _SECONDS, **speeds},
        ),
        make_action(
            walk_backward,
            phrases=("walk back", "walk backward", "walk backwards", "go back", "step back"),
            bounds={"seconds": _SECONDS, "speed": (0.05, 0.5)},
        ),
        make_action(
            turn,
            phrases=(
                Phrase("turn left", direction="left"),
                Phrase("turn right", direction="right"),
                Phrase("turn around", direction="left", seconds=6.3),
            ),
            bounds={"seconds": _SECONDS, "rate": (0.1, 1.0)},
        ),
        make_action(stop_walking, phrases=("stop walking", "stand still", "halt")),
        make_action(
            set_gait,
            phrases=(
                Phrase("start walking", mode="Walk"),
                Phrase("get ready to walk", mode="Walk"),
                Phrase("start running", mode="Run"),
                Phrase("stand up", mode="Stand"),
            ),
        ),
        make_action(
            stand_motion,
            phrases=(
                Phrase("greet", name="Greeting"),
                Phrase("do a greeting", name="Greeting"),
                Phrase("stretch", name="Stretching"),
                Phrase("salute", name="Gentleman's Salute"),
                Phrase("expand your chest", name="Chest Expansion"),
            ),
            choices={"name": tuple(MOTIONS)},
        ),
        make_action(
            posture,
            phrases=(
                Phrase("lean forward", pitch=0.08),
                Phrase("crouch", height=-0.15),
                Phrase("stand tall"),
            ),
            bounds={
                "pitch": _range("stand_pitch"),
                "roll": _range("stand_roll"),
                "yaw": _range("stand_yaw"),
                "height": _range("stand_height"),
            },
        ),
    ]
    for act in actions:
        registry.add(act)
    old = registry.get("stop")
    registry.add(
        make_action(stop, phrases=old.phrases if old is not None else ("stop",)), replace=True
    )


def _range(axis: str) -> tuple[float, float]:
    r = POSTURE[axis]
    return (r.low, r.high)


def _stand_still(robot: Humanoid) -> None:
    # outside Walk/Run the robot is not moving its feet: a refusal here means "nothing to stop"
    with contextlib.suppress(AnimaError):
        robot.speed(0.0, 0.0, 0.0)
