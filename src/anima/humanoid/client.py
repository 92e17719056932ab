"""AdamClient: drive a real or simulated Adam over adam_control.RobotControl, safely.

It queries before it commands, as the vendor's interface asks: each command first reads
``GetRobotState`` and checks the relevant ``*_enable_list`` (or FSM mode), and values are
checked against the documented ranges, before anything is sent. A command the robot does not
accept now raises :class:`~anima.errors.CommandNotAllowedError` saying what is allowed; a bad
value raises :class:`~anima.errors.InvalidCommandError`; a transport failure raises
:class:`~anima.errors.HumanoidError` naming the address and the RPC.

::

    with AdamClient() as adam:                 # ip_config.json, else 127.0.0.1:6666
        adam.set_mode("Start")
        adam.wait_for_mode("Start")
        print(adam.state().mode_enable_list)

The constructor touches no network; ``connect()`` (or ``with``) does, with a timeout.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Protocol

import grpc

from anima.clock import Clock, MonotonicClock
from anima.errors import (
    CommandNotAllowedError,
    HumanoidError,
    HumanoidNotConnectedError,
    InvalidCommandError,
    NonFiniteValueError,
)
from anima.humanoid import adam_control_pb2 as pb
from anima.humanoid import adam_control_pb2_grpc as pb_grpc
from anima.humanoid.arguments import (
    DEFAULT_IP,
    DEFAULT_PORT,
    IP_CONFIG,
    check_ranges,
    control_mode_id,
    finite,
    load_ip_config,
)
from anima.humanoid.spec import (
    CARRY_BOX,
    GAITS,
    POSTURE,
    SPEED,
    STOP,
    Range,
    RobotState,
    StandLists,
    quote,
)
from anima.humanoid.wire import lists_from_pb, state_from_pb

log = logging.getLogger(__name__)

# Ping every 10 s even when idle, so a dead link (robot rebooted, cable out) is noticed within
# ~15 s instead of at the next command; the server allows pings this often.
KEEPALIVE: tuple[tuple[str, int], ...] = (
    ("grpc.keepalive_time_ms", 10_000),
    ("grpc.keepalive_timeout_ms", 5_000),
    ("grpc.keepalive_permit_without_calls", 1),
    ("grpc.http2.max_pings_without_data", 0),
)


class _SetterAnswer(Protocol):
    """What every setter RPC answers."""

    success: bool
    message: str


def _reason(rpc: str, message: str) -> str:
    """The server's refusal without its own "RPC refused: " prefix (we say it already)."""
    return message.removeprefix(f"{rpc} refused: ")


class AdamClient:
    """A client of adam_control.RobotControl that checks before it sends."""

    def __init__(
        self,
        ip: str | None = None,
        port: int | None = None,
        *,
        ip_config: str | Path | None = None,
        connect_timeout_s: float = 5.0,
        call_timeout_s: float = 5.0,
        poll_s: float = 0.5,
        control_timeout_s: float = 30.0,
        speed_limits: Mapping[str, Mapping[str, Range]] | None = SPEED,
        sleep: Callable[[float], None] = time.sleep,
        clock: Clock | None = None,
    ) -> None:
        """Arguments win over ``ip_config`` (default: ``./ip_config.json`` when present), which
        wins over 127.0.0.1:6666. ``speed_limits`` caps SetSpeed client-side (None: leave it to
        the robot). ``sleep`` and ``clock`` pace the polling (tests pass fakes)."""
        cfg_ip, cfg_port = DEFAULT_IP, DEFAULT_PORT
        if ip_config is not None or Path(IP_CONFIG).is_file():
            cfg_ip, cfg_port = load_ip_config(ip_config or IP_CONFIG)
        self.ip = ip or cfg_ip
        self.port = port or cfg_port
        self.target = f"[{self.ip}]:{self.port}" if ":" in self.ip else f"{self.ip}:{self.port}"
        self.connect_timeout_s = connect_timeout_s
        self.call_timeout_s = call_timeout_s
        self.poll_s = poll_s  # GetControlState / GetRobotState polling period, seconds
        self.control_timeout_s = control_timeout_s  # how long set_control_mode waits
        self.speed_limits = speed_limits
        self._sleep = sleep
        self._clock = clock or MonotonicClock()
        self._channel: grpc.Channel | None = None
        self._stub: Any = None  # the generated stub is unannotated; results are typed below

    # --- connection ------------------------------------------------------------------------------
    def connect(self) -> AdamClient:
        """Open the channel and wait until it is ready (``connect_timeout_s``)."""
        if self._channel is not None:
            return self
        channel = grpc.insecure_channel(self.target, options=KEEPALIVE)
        try:
            grpc.channel_ready_future(channel).result(timeout=self.connect_timeout_s)
        except grpc.FutureTimeoutError:
            channel.close()
            raise HumanoidNotConnectedError(
                f"cannot reach Adam at {self.target} within {self.connect_timeout_s:g} s "
                "(is the robot control program running? check ip_config.json)"
            ) from None
        self._channel, self._stub = channel, pb_grpc.RobotControlStub(channel)
        return self

    def close(self) -> None:
        if self._channel is not None:
            self._channel.close()
            self._channel = self._stub = None

    def __enter__(self) -> AdamClient:
        return self.connect()

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _call(self, rpc: str, request: object) -> Any:  # the stub is untyped: callers annotate
        if self._stub is None:
            raise HumanoidNotConnectedError(f"{rpc}: not connected to Adam (call connect() first)")
        try:
            answer = getattr(self._stub, rpc)(request, timeout=self.call_timeout_s)
        except grpc.RpcError as exc:
            code = exc.code().name if isinstance(exc, grpc.Call) else "UNKNOWN"
            details = exc.details() if isinstance(exc, grpc.Call) else str(exc)
            down = code == "UNAVAILABLE"  # the link, not the call: no robot answers there
            error = HumanoidNotConnectedError if down else HumanoidError
            raise error(f"{rpc} to {self.target} failed: {code}: {details}") from exc
        return answer

    def _command(self, rpc: str, request: object, shown: str) -> str:
        answer: _SetterAnswer = self._call(rpc, request)
        if not answer.success:
            raise CommandNotAllowedError(
                f"the robot refused {shown}: {_reason(rpc, answer.message)}"
            )
        return answer.message

    @staticmethod
    def _refuse(shown: str, s: RobotState, why: str) -> CommandNotAllowedError:
        doing = f" ({s.message})" if s.message else ""
        return CommandNotAllowedError(f"{shown} is not allowed now: {why}; in {s.fsm_name}{doing}")

    # --- queries ---------------------------------------------------------------------------------
    def state(self) -> RobotState:
        """GetRobotState: the FSM mode, motion, posture, velocity and what is accepted now."""
        request = pb.GetRobotStateRequest(get_state_flag=True)
        answer: pb.GetRobotStateResponse = self._call("GetRobotState", request)
        if not answer.success:
            raise HumanoidError(f"GetRobotState failed: {answer.message}")
        return state_from_pb(answer)

    def lists(self) -> StandLists:
        """GetStandList: every mode, motion, action and carry-box code the robot knows."""
        request = pb.GetStandListRequest(mode_list_req=True)
        answer: pb.GetStandListResponse = self._call("GetStandList", request)
        return lists_from_pb(answer)

    def control_state(self) -> int:
        """GetControlState: 0 traditional, 1 RL, -1 before the robot's first feedback."""
        request = pb.GetControlStateRequest()
        answer: pb.GetControlStateResponse = self._call("GetControlState", request)
        return answer.domain_id

    def wait_for_mode(self, mode: str, timeout_s: float = 15.0) -> RobotState:
        """Poll GetRobotState until ``fsm_name`` is ``mode`` (reached); HumanoidError on timeout."""
        deadline = self._clock.now() + timeout_s
        while True:
            s = self.state()
            if s.fsm_name == mode:
                return s
            if self._clock.now() >= deadline:
                raise HumanoidError(
                    f"Adam did not reach {mode} within {timeout_s:g} s: {s.message}"
                )
            self._sleep(self.poll_s)

    # --- commands --------------------------------------------------------------------------------
    def set_mode(self, mode: str) -> str:
        """SetMode, once ``mode`` is in ``mode_enable_list``; returns the robot's answer."""
        s, shown = self.state(), f"SetMode({quote(mode)})"
        if mode not in s.mode_enable_list:
            raise self._refuse(shown, s, f"mode_enable_list is {list(s.mode_enable_list)}")
        return self._command("SetMode", pb.SetModeRequest(mode=mode), shown)

    def stand_motion(self, motion: str) -> str:
        """SetStandMotion, once ``motion`` is in ``motion_enable_list``."""
        s, shown = self.state(), f"SetStandMotion({quote(motion)})"
        if motion not in s.motion_enable_list:
            raise self._refuse(shown, s, f"motion_enable_list is {list(s.motion_enable_list)}")
        return self._command("SetStandMotion", pb.SetStandMotionRequest(motion=motion), shown)

    def carry_box(self, code: str | int) -> str:
        """SetStandCarryBox: "1" squat to carry, "2" stand to carry, "0" put down."""
        code = str(code).strip()
        if code not in CARRY_BOX:
            raise InvalidCommandError(
                f"carry box must be 0 (put down), 1 (squat to carry) or 2 (stand to carry), "
                f"got {quote(code)}"
            )
        s, shown = self.state(), f"SetStandCarryBox({code!r})"
        if code not in s.carrybox_enable_list:
            raise self._refuse(shown, s, f"carrybox_enable_list is {list(s.carrybox_enable_list)}")
        return self._command("SetStandCarryBox", pb.SetCarryBoxRequest(carry_box=code), shown)

    def posture(self, pitch: float, roll: float, yaw: float, height: float) -> str:
        """SetStandAction: pitch ±0.1, roll ±0.06, yaw ±0.25 rad, height -0.2…0 m."""
        values = {"stand_pitch": pitch, "stand_roll": roll, "stand_yaw": yaw}
        values["stand_height"] = height
        check_ranges(values, POSTURE)
        s, shown = self.state(), "SetStandAction"
        if not set(values) <= set(s.action_enable_list):
            raise self._refuse(shown, s, f"action_enable_list is {list(s.action_enable_list)}")
        return self._command("SetStandAction", pb.SetActionRequest(**values), shown)

    def speed(self, x: float, y: float, yaw: float, *, continuous: bool = False) -> str:
        """SetSpeed in Walk / Run; without ``continuous`` the robot stops after 5 s."""
        values = {"x_speed": x, "y_speed": y, "yaw_speed": yaw}
        for name, value in values.items():
            if not finite(value):
                raise NonFiniteValueError(f"{name} is not finite ({value!r})")
        s, shown = self.state(), f"SetSpeed(x={x:g}, y={y:g}, yaw={yaw:g})"
        if s.fsm_name not in GAITS:
            raise self._refuse(shown, s, "SetSpeed needs Walk or Run")
        if self.speed_limits is not None and s.fsm_name in self.speed_limits:
            check_ranges(values, self.speed_limits[s.fsm_name])
        request = pb.SetSpeedRequest(x_speed=x, y_speed=y, yaw_speed=yaw, continous=continuous)
        return self._command("SetSpeed", request, shown)

    def dynamic(self, on: bool) -> str:
        """SetStandDynamic: dynamic balance on or off, once ``balance_control_enable`` says so."""
        s, shown = self.state(), f"SetStandDynamic({on})"
        if not s.balance_control_enable:
            raise self._refuse(shown, s, "balance_control_enable is empty")
        return self._command("SetStandDynamic", pb.SetDynamicStandRequest(dynamic_stand=on), shown)

    def unigait_com(self, on: bool) -> str:
        """AutoUnigaitCOM: centre-of-mass X balancing in Walk / Run."""
        s, shown = self.state(), f"AutoUnigaitCOM({on})"
        if s.fsm_name not in GAITS:
            raise self._refuse(shown, s, "AutoUnigaitCOM needs Walk or Run")
        request = pb.SetUnigaitCOMRequest(unigait_mode_com_x=on)
        return self._command("AutoUnigaitCOM", request, shown)

    def clear_errors(self) -> str:
        """SetErrorClear, in Stop."""
        s, shown = self.state(), "SetErrorClear"
        if s.fsm_name != STOP:
            raise self._refuse(shown, s, "SetErrorClear only in Stop")
        request = pb.SetErrorClearRequest(error_clear_flag=True)
        return self._command("SetErrorClear", request, shown)

    def close_program(self) -> str:
        """CloseProgram: shut the robot control program down (in Stop)."""
        s, shown = self.state(), "CloseProgram"
        if s.fsm_name != STOP:
            raise self._refuse(shown, s, "CloseProgram only in Stop (the robot would fall)")
        return self._command("CloseProgram", pb.CloseProgramRequest(close_flag=True), shown)

    def set_control_mode(self, mode: int | str) -> int:
        """SetControlMode, then poll GetControlState every ``poll_s`` until the switch shows or
        ``control_timeout_s`` passes. Returns the last known domain id (0, 1, or -1): compare it
        with what you asked for; a timeout is logged, not raised, as the vendor's client does."""
        target = control_mode_id(mode)
        shown = f"SetControlMode({target})"
        request = pb.SetControlModeRequest(domain_id=target)
        answer: pb.SetControlModeResponse = self._call("SetControlMode", request)
        if not answer.success:
            reason = _reason("SetControlMode", answer.message)
            raise CommandNotAllowedError(f"the robot refused {shown}: {reason}")
        last, deadline = answer.current_mode, self._clock.now() + self.control_timeout_s
        while True:
            last = self.control_state()
            if last == target or self._clock.now() >= deadline:
                break
            self._sleep(self.poll_s)
        if last != target:
            log.warning(
                "control mode still %d after %g s (DDS down?)", last, self.control_timeout_s
            )
        return last
