"""The simulated Adam humanoid: the "robot control program" behind ``adam_control.RobotControl``.

Pure logic on an injected :class:`~anima.clock.Clock`, no I/O and no thread of its own: every
call first brings the simulation up to ``clock.now()`` (event by event, so the result does not
depend on how often it is called), then answers under one lock. Tests drive it with a
:class:`~anima.testing.FakeClock`.

The FSM: Stop (drives off, the start-up state) → Start → Zero (calibration) → Stand → Walk / Run,
Stand ↔ SingleStand; Stop (emergency stop) from anywhere. Entering a mode takes simulated time,
during which only Stop is accepted. Every ``*_enable_list`` is computed by asking the very rule
that judges the command, for each candidate, so a list always says exactly what would be
accepted right now. The rules themselves live in :mod:`anima.humanoid.rules`.
"""

from __future__ import annotations

import threading

from anima.clock import Clock
from anima.humanoid import rules
from anima.humanoid.dynamics import Gait, Posture
from anima.humanoid.paradigm import ControlParadigm
from anima.humanoid.spec import (
    BALANCE_CONTROL,
    CARRY_BOX,
    ENTER_S,
    GAITS,
    MODES,
    MOTIONS,
    PICK_UP,
    POSTURE,
    SPEED,
    STAND,
    STAND_LISTS,
    STOP,
    UNIGAIT_COM,
    ZERO,
    Reply,
    RobotState,
    StandLists,
)

# mode, motion, action and carry-box enable lists, and balance_control_enable
_Lists = tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...], tuple[str, ...], str]


class SimulatedAdam:
    """A simulated Adam: each public method is one RPC of the service, answered at once."""

    def __init__(self, clock: Clock, *, motion_files: bool = True) -> None:
        self._clock = clock
        self._lock = threading.Lock()
        self._t = clock.now()  # the simulation is up to date until this instant
        self.mode = STOP  # the mode reached; drives off at start-up
        self.entering: tuple[str, float] | None = None  # (mode, when it is reached)
        self.errors = False  # drive errors latched by an emergency stop
        self.motion: tuple[str, float] | None = None  # (stand motion, when it ends)
        self.carry: tuple[str, float] | None = None  # (carry-box code, when the move ends)
        self.holding_box = False
        self.balance = False  # dynamic balance on
        self.closed = False  # CloseProgram accepted: nothing else is
        self.motion_files = motion_files  # whether the motion-capture files are loaded
        self.posture = Posture()
        self.gait = Gait()
        self.paradigm = ControlParadigm(self._t)
        self._lists_key: tuple[object, ...] | None = None  # what the cached lists were built from
        self._lists: _Lists = ((), (), (), (), "")

    # --- time ------------------------------------------------------------------------------------
    def _advance(self) -> float:
        """Bring the simulation to the clock's now, one discrete event at a time."""
        now = self._clock.now()
        while True:
            pending = [
                t
                for t in (
                    self.entering[1] if self.entering else None,
                    self.motion[1] if self.motion else None,
                    self.carry[1] if self.carry else None,
                    self.gait.lapse_at,
                    self.paradigm.next_event(),
                )
                if t is not None and t <= now
            ]
            if not pending:
                break
            when = max(self._t, min(pending))
            self._integrate(when)
            self._fire(when)
        self._integrate(now)
        return self._t

    def _integrate(self, until: float) -> None:
        dt = until - self._t
        if dt > 0:  # a clock never goes back; ignore one that does
            if self.mode != STOP:  # drives off: nothing moves
                self.posture.advance(dt)
                self.gait.advance(dt)
            self._t = until

    def _fire(self, now: float) -> None:
        if self.entering and self.entering[1] <= now:
            self.mode = self.entering[0]
            self.entering = None
            if self.mode == ZERO:
                self.posture.zero()
        if self.motion and self.motion[1] <= now:
            self.motion = None
        if self.carry and self.carry[1] <= now:
            self.holding_box = self.carry[0] in PICK_UP
            self.carry = None
        if self.gait.lapse_at is not None and self.gait.lapse_at <= now:
            self.gait.lapse()
        self.paradigm.fire(now)

    # --- queries ---------------------------------------------------------------------------------
    def _enable_lists(self, now: float) -> _Lists:
        """The four enable lists and balance_control_enable, each asked of the rules.

        Memoized on everything the rules read (they read nothing else: the property test in
        tests/humanoid checks lists against answers), so a GetRobotState while nothing
        discrete changes — a posture ramping, a robot walking — does not re-ask them all.
        """
        key = (
            self.mode,
            self.entering,
            self.motion,
            self.carry,
            self.errors,
            self.holding_box,
            self.closed,
            self.motion_files,
            self.gait.at_rest,
            self.paradigm.mode,
            self.paradigm.pending,
        )
        if key != self._lists_key:
            self._lists = (
                tuple(m for m in MODES if rules.mode(self, m, now) is None),
                tuple(m for m in MOTIONS if rules.stand_motion(self, m, now) is None),
                tuple(POSTURE) if rules.stand_action(self, now) is None else (),
                tuple(c for c in sorted(CARRY_BOX) if rules.carry_box(self, c, now) is None),
                BALANCE_CONTROL if rules.stand_dynamic(self, now) is None else "",
            )
            self._lists_key = key
        return self._lists

    def state(self) -> RobotState:
        """GetRobotState: one consistent snapshot, enable lists included."""
        with self._lock:
            now = self._advance()
            modes, motions, actions_now, carry, balance = self._enable_lists(now)
            actions = self.posture.moving() + ((UNIGAIT_COM,) if self.gait.unigait_com else ())
            current = ""
            if self.motion:
                current = self.motion[0]
            elif self.carry:
                current = f"CarryBox {self.carry[0]}: {CARRY_BOX[self.carry[0]][0]}"
            return RobotState(
                message=rules.describe(self, now),
                fsm_name=self.mode,
                current_motion=current,
                current_action_list=actions,
                mode_enable_list=modes,
                motion_enable_list=motions,
                action_enable_list=actions_now,
                carrybox_enable_list=carry,
                balance_control_enable=balance,
                stand_pitch=self.posture.value("stand_pitch"),
                stand_roll=self.posture.value("stand_roll"),
                stand_yaw=self.posture.value("stand_yaw"),
                stand_height=self.posture.value("stand_height"),
                x_vel=self.gait.value("x_speed"),
                y_vel=self.gait.value("y_speed"),
                yaw_vel=self.gait.value("yaw_speed"),
                balance_control_state=self.balance,
                motion_files_enable=self.motion_files,
                current_control_mode=self.paradigm.feedback(now),
            )

    def stand_list(self) -> StandLists:
        """GetStandList: the fixed lists."""
        return STAND_LISTS

    def control_state(self) -> int:
        """GetControlState: 0 traditional, 1 RL, -1 before the first feedback."""
        with self._lock:
            return self.paradigm.feedback(self._advance())

    # --- commands --------------------------------------------------------------------------------
    def set_mode(self, mode: str) -> Reply:
        """SetMode: enter ``mode`` (Stop at once, others after their entering time)."""
        with self._lock:
            now = self._advance()
            refusal = rules.mode(self, mode, now)
            if refusal is not None:
                return Reply(False, refusal)
            if mode == STOP:
                return Reply(True, self._emergency_stop())
            if self.mode == STAND:  # leaving Stand: back to the neutral posture, balance off
                self.posture.relax()
                self.balance = False
            if self.mode in GAITS:
                self.gait.lapse()
                if mode not in GAITS:
                    self.gait.unigait_com = False
            self.entering = (mode, now + ENTER_S[mode])
            return Reply(True, f"entering {mode} ({ENTER_S[mode]:g} s)")

    def _emergency_stop(self) -> str:
        if self.mode == STOP and self.entering is None:
            return "already in Stop"
        self.mode, self.entering, self.motion, self.carry = STOP, None, None, None
        self.holding_box = self.balance = False
        self.errors = True
        self.gait.halt()
        self.posture.freeze()
        return "emergency stop: drives off; SetErrorClear before Start"

    def stand_motion(self, motion: str) -> Reply:
        """SetStandMotion: play a motion-capture motion in Stand."""
        with self._lock:
            now = self._advance()
            refusal = rules.stand_motion(self, motion, now)
            if refusal is not None:
                return Reply(False, refusal)
            self.motion = (motion, now + MOTIONS[motion])
            return Reply(True, f"playing {motion} ({MOTIONS[motion]:g} s)")

    def carry_box(self, code: str) -> Reply:
        """SetStandCarryBox: "1" squat to carry, "2" stand to carry, "0" put the box down."""
        with self._lock:
            now = self._advance()
            refusal = rules.carry_box(self, code, now)
            if refusal is not None:
                return Reply(False, refusal)
            label, seconds = CARRY_BOX[code]
            self.carry = (code, now + seconds)
            return Reply(True, f"carry box {code}: {label} ({seconds:g} s)")

    def stand_action(self, pitch: float, roll: float, yaw: float, height: float) -> Reply:
        """SetStandAction: a new posture target, reached at the posture rate limits."""
        targets = {"stand_pitch": pitch, "stand_roll": roll, "stand_yaw": yaw}
        targets["stand_height"] = height
        with self._lock:
            now = self._advance()
            refusal = rules.values(targets, POSTURE) or rules.stand_action(self, now)
            if refusal is not None:
                return Reply(False, refusal)
            seconds = self.posture.aim(targets)
            shown = ", ".join(f"{k.removeprefix('stand_')}={v:g}" for k, v in targets.items())
            return Reply(True, f"posture {shown}: reached in {seconds:.1f} s")

    def stand_dynamic(self, on: bool) -> Reply:
        """SetStandDynamic: dynamic balance on or off."""
        with self._lock:
            refusal = rules.stand_dynamic(self, self._advance())
            if refusal is not None:
                return Reply(False, refusal)
            self.balance = on
            return Reply(True, f"dynamic balance {'on' if on else 'off'}")

    def set_speed(self, x: float, y: float, yaw: float, continuous: bool) -> Reply:
        """SetSpeed: a velocity target in Walk / Run; without ``continuous`` it lapses in 5 s."""
        speeds = {"x_speed": x, "y_speed": y, "yaw_speed": yaw}
        with self._lock:
            now = self._advance()
            refusal = rules.finite(speeds) or rules.gait(self, "SetSpeed", now)
            refusal = refusal or rules.values(speeds, SPEED[self.mode])
            if refusal is not None:
                return Reply(False, refusal)
            self.gait.command(speeds, continuous=continuous, now=now)
            held = "until changed" if continuous else "for 5 s"
            return Reply(True, f"speed x={x:g} y={y:g} yaw={yaw:g} {held}")

    def unigait_com(self, on: bool) -> Reply:
        """AutoUnigaitCOM: centre-of-mass X offset balancing in Walk / Run."""
        with self._lock:
            refusal = rules.gait(self, "AutoUnigaitCOM", self._advance())
            if refusal is not None:
                return Reply(False, refusal)
            self.gait.unigait_com = on
            return Reply(True, f"COM X balancing {'on' if on else 'off'}")

    def clear_errors(self, flag: bool) -> Reply:
        """SetErrorClear: clear latched drive errors, in Stop only."""
        with self._lock:
            refusal = rules.clear_errors(self, flag, self._advance())
            if refusal is not None:
                return Reply(False, refusal)
            had, self.errors = self.errors, False
            return Reply(True, "drive errors cleared" if had else "no drive errors to clear")

    def close(self, flag: bool) -> Reply:
        """CloseProgram: accepted in Stop only; afterwards every command is refused."""
        with self._lock:
            refusal = rules.close(self, flag, self._advance())
            if refusal is not None:
                return Reply(False, refusal)
            self.closed = True
            return Reply(True, "closing the robot control program")

    def set_control_mode(self, domain_id: int) -> tuple[Reply, int]:
        """SetControlMode: starts the switch and returns at once, with the last known mode."""
        with self._lock:
            now = self._advance()
            refusal = rules.control_mode(self, domain_id, now)
            if refusal is None:
                reply = Reply(True, self.paradigm.request(domain_id, now))
            else:
                reply = Reply(False, refusal)
            return reply, self.paradigm.feedback(now)
