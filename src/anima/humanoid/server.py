"""The adam_control.RobotControl gRPC server over the simulated Adam.

A synchronous gRPC server with a small thread pool, gRPC health checking (overall and for
``adam_control.RobotControl``) and server reflection. Every handler catches everything: a
request the simulation cannot handle is answered ``success=false`` with the reason, and the
server keeps serving. CloseProgram (accepted in Stop) answers, then shuts the server down
gracefully: health turns NOT_SERVING, calls in flight finish, new ones are refused.

::

    server = serve(port=0)          # started; port 0 picks a free one
    print(server.port)
    server.wait()                   # until stop() or CloseProgram
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from concurrent import futures
from typing import Protocol, TypeVar

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection

from anima.clock import Clock, MonotonicClock
from anima.errors import HumanoidError
from anima.humanoid import adam_control_pb2 as pb
from anima.humanoid.decoding import add_robot_control, one_line_decode_errors
from anima.humanoid.fsm import SimulatedAdam
from anima.humanoid.spec import Reply
from anima.humanoid.wire import SERVICE, lists_to_pb, state_to_pb

log = logging.getLogger(__name__)

DEFAULT_PORT = 6666  # the vendor's fixed port
# Clients keep their connection alive with pings (AdamClient: every 10 s); allow that without
# answering GOAWAY "too many pings". SO_REUSEPORT off: a second server on a taken port must
# fail to start, not silently share it.
SERVER_OPTIONS: tuple[tuple[str, int], ...] = (
    ("grpc.keepalive_permit_without_calls", 1),
    ("grpc.http2.min_recv_ping_interval_without_data_ms", 5000),
    ("grpc.so_reuseport", 0),
)


class _Setter(Protocol):
    def __init__(self, *, success: bool, message: str) -> None: ...


R = TypeVar("R", bound=_Setter)


def _answer(rpc: str, kind: type[R], act: Callable[[], Reply]) -> R:
    try:
        reply = act()
    except Exception as exc:  # no request may take the server down: answer it instead
        log.exception("%s failed", rpc)
        return kind(success=False, message=f"{rpc} failed inside the simulation: {exc!r}"[:500])
    if not reply.success:
        log.debug("%s refused: %s", rpc, reply.message)
    return kind(success=reply.success, message=reply.message)


class RobotControlServicer:
    """The 13 RPCs of adam_control.RobotControl, each answered by the simulated Adam."""

    def __init__(self, adam: SimulatedAdam, on_close: Callable[[], None]) -> None:
        self._adam = adam
        self._on_close = on_close
        self._lists = lists_to_pb(adam.stand_list())  # fixed: built once

    def SetMode(self, request: pb.SetModeRequest, context: object) -> pb.SetModeResponse:
        return _answer("SetMode", pb.SetModeResponse, lambda: self._adam.set_mode(request.mode))

    def SetStandMotion(
        self, request: pb.SetStandMotionRequest, context: object
    ) -> pb.SetStandMotionResponse:
        return _answer(
            "SetStandMotion",
            pb.SetStandMotionResponse,
            lambda: self._adam.stand_motion(request.motion),
        )

    def SetStandCarryBox(
        self, request: pb.SetCarryBoxRequest, context: object
    ) -> pb.SetCarryBoxResponse:
        return _answer(
            "SetStandCarryBox",
            pb.SetCarryBoxResponse,
            lambda: self._adam.carry_box(request.carry_box),
        )

    def SetStandAction(self, request: pb.SetActionRequest, context: object) -> pb.SetActionResponse:
        r = request
        return _answer(
            "SetStandAction",
            pb.SetActionResponse,
            lambda: self._adam.stand_action(
                r.stand_pitch, r.stand_roll, r.stand_yaw, r.stand_height
            ),
        )

    def SetStandDynamic(
        self, request: pb.SetDynamicStandRequest, context: object
    ) -> pb.SetDynamicStandResponse:
        return _answer(
            "SetStandDynamic",
            pb.SetDynamicStandResponse,
            lambda: self._adam.stand_dynamic(request.dynamic_stand),
        )

    def SetSpeed(self, request: pb.SetSpeedRequest, context: object) -> pb.SetSpeedResponse:
        r = request
        return _answer(
            "SetSpeed",
            pb.SetSpeedResponse,
            lambda: self._adam.set_speed(r.x_speed, r.y_speed, r.yaw_speed, r.continous),
        )

    def AutoUnigaitCOM(
        self, request: pb.SetUnigaitCOMRequest, context: object
    ) -> pb.SetUnigaitCOMResponse:
        return _answer(
            "AutoUnigaitCOM",
            pb.SetUnigaitCOMResponse,
            lambda: self._adam.unigait_com(request.unigait_mode_com_x),
        )

    def SetErrorClear(
        self, request: pb.SetErrorClearRequest, context: object
    ) -> pb.SetErrorClearResponse:
        return _answer(
            "SetErrorClear",
            pb.SetErrorClearResponse,
            lambda: self._adam.clear_errors(request.error_clear_flag),
        )

    def GetStandList(
        self, request: pb.GetStandListRequest, context: object
    ) -> pb.GetStandListResponse:
        return self._lists

    def GetRobotState(
        self, request: pb.GetRobotStateRequest, context: object
    ) -> pb.GetRobotStateResponse:
        try:
            return state_to_pb(self._adam.state())
        except Exception as exc:  # answer, never crash
            log.exception("GetRobotState failed")
            return pb.GetRobotStateResponse(success=False, message=f"GetRobotState failed: {exc!r}")

    def CloseProgram(
        self, request: pb.CloseProgramRequest, context: object
    ) -> pb.CloseProgramResponse:
        answer = _answer(
            "CloseProgram", pb.CloseProgramResponse, lambda: self._adam.close(request.close_flag)
        )
        if answer.success:
            self._on_close()
        return answer

    def SetControlMode(
        self, request: pb.SetControlModeRequest, context: object
    ) -> pb.SetControlModeResponse:
        try:
            reply, current = self._adam.set_control_mode(request.domain_id)
        except Exception as exc:  # answer, never crash
            log.exception("SetControlMode failed")
            return pb.SetControlModeResponse(
                success=False, message=f"SetControlMode failed: {exc!r}", current_mode=-1
            )
        return pb.SetControlModeResponse(
            success=reply.success, message=reply.message, current_mode=current
        )

    def GetControlState(
        self, request: pb.GetControlStateRequest, context: object
    ) -> pb.GetControlStateResponse:
        try:
            return pb.GetControlStateResponse(success=True, domain_id=self._adam.control_state())
        except Exception as exc:  # answer, never crash
            log.exception("GetControlState failed")
            return pb.GetControlStateResponse(
                success=False, message=f"GetControlState failed: {exc!r}", domain_id=-1
            )


def host_port(bind: str, port: int) -> str:
    """``bind:port`` with an IPv6 address bracketed."""
    host = f"[{bind}]" if ":" in bind and not bind.startswith("[") else bind
    return f"{host}:{port}"


def build_server(
    servicer: object, *, bind: str, port: int, max_workers: int = 8
) -> tuple[grpc.Server, health.HealthServicer, int]:
    """A gRPC server carrying ``servicer`` as adam_control.RobotControl, with health checking
    and reflection, bound (not started). Returns the server, its health servicer and the port.
    Shared by :class:`AdamServer` and the benchmark's trivial server, so both have one shape."""
    server = grpc.server(
        futures.ThreadPoolExecutor(max_workers=max_workers, thread_name_prefix="adam-grpc"),
        options=SERVER_OPTIONS,
    )
    add_robot_control(servicer, server)  # garbage: INVALID_ARGUMENT and one log line
    one_line_decode_errors()  # and one line for what gRPC decodes itself (health, reflection)
    checker = health.HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(checker, server)
    names = (pb.DESCRIPTOR.services_by_name["RobotControl"].full_name, reflection.SERVICE_NAME)
    reflection.enable_server_reflection((*names, health.SERVICE_NAME), server)
    address = host_port(bind, port)
    try:
        bound = server.add_insecure_port(address)
    except RuntimeError as exc:  # grpc raises when the address cannot be bound
        raise HumanoidError(f"cannot listen on {address}: {exc}") from exc
    if bound == 0:
        raise HumanoidError(f"cannot listen on {address}: address in use or not available")
    return server, checker, bound


class AdamServer:
    """The simulated Adam served over gRPC. ``start()`` binds and serves; ``stop()`` ends it."""

    def __init__(
        self,
        *,
        bind: str = "127.0.0.1",
        port: int = DEFAULT_PORT,
        clock: Clock | None = None,
        adam: SimulatedAdam | None = None,
        max_workers: int = 8,
        grace_s: float = 1.0,
    ) -> None:
        self.bind = bind
        self.requested_port = port
        self.adam = adam or SimulatedAdam(clock or MonotonicClock())
        self._max_workers = max_workers
        self._grace_s = grace_s  # calls in flight get this long to finish on stop
        self._server: grpc.Server | None = None
        self._health: health.HealthServicer | None = None
        self._stopped = threading.Event()
        self.port = 0  # the bound port, once started

    @property
    def address(self) -> str:
        """Where clients connect (``127.0.0.1:6666``)."""
        return host_port(self.bind, self.port)

    def start(self) -> int:
        """Bind and serve; returns the bound port. Raises HumanoidError if it cannot bind."""
        if self._server is not None:
            raise HumanoidError("the Adam server is already started")
        servicer = RobotControlServicer(self.adam, on_close=self._close_requested)
        server, checker, self.port = build_server(
            servicer, bind=self.bind, port=self.requested_port, max_workers=self._max_workers
        )
        for name in ("", SERVICE):
            checker.set(name, health_pb2.HealthCheckResponse.SERVING)
        server.start()
        self._server, self._health = server, checker
        log.info("simulated Adam serving adam_control.RobotControl on %s", self.address)
        return self.port

    def _close_requested(self) -> None:
        log.info("CloseProgram: shutting the simulated Adam down")
        self._shutdown(self._grace_s)

    def _shutdown(self, grace_s: float) -> threading.Event | None:
        # grpc's stop() does not block: the CloseProgram call in flight still gets its answer
        if self._server is None:
            return None
        if self._health is not None:
            self._health.enter_graceful_shutdown()
        done = self._server.stop(grace_s)
        self._stopped.set()
        return done

    def stop(self, grace_s: float | None = None, timeout_s: float = 5.0) -> None:
        """Stop serving: calls in flight get ``grace_s`` to finish; returns once stopped."""
        done = self._shutdown(self._grace_s if grace_s is None else grace_s)
        if done is not None and not done.wait(timeout_s):
            log.warning("the Adam server did not stop within %.1f s", timeout_s)

    def wait(self, timeout_s: float | None = None) -> bool:
        """Block until the server has stopped (``stop()`` or CloseProgram); True once stopped."""
        if self._server is None:
            return True
        if not self._stopped.wait(timeout_s):
            return False
        return not self._server.wait_for_termination(timeout_s)

    def __enter__(self) -> AdamServer:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop(grace_s=0.0)


def serve(
    bind: str = "127.0.0.1", port: int = DEFAULT_PORT, *, clock: Clock | None = None
) -> AdamServer:
    """Start a simulated Adam on ``bind:port`` (loopback by default) and return it, serving."""
    server = AdamServer(bind=bind, port=port, clock=clock)
    server.start()
    return server
