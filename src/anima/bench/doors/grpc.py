"""``anima bench grpc``: GetRobotState against the simulated Adam, next to a trivial servicer.

Two servers run in this process on loopback, built by the same function (same thread pool,
options, health and reflection), so they differ only in the servicer:

- **ours**: the simulated Adam in Stand with dynamic balance on and a posture still moving, so
  every list is full and every call really runs the FSM (time advance, the rules behind each
  enable list, the message built from the snapshot);
- **trivial**: a servicer of the same shape whose GetRobotState returns one constant
  response of the same content, built once.

One client thread calls each in turn, in interleaved blocks of 100 calls so machine noise
hits both alike. Figures: p50 / p99 latency per call and calls per second; the ratio of ours
to the trivial one is held to ≤ 1.3.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass

import grpc
import numpy as np

from anima.humanoid import adam_control_pb2 as pb
from anima.humanoid import adam_control_pb2_grpc as pb_grpc
from anima.humanoid.fsm import SimulatedAdam
from anima.humanoid.server import AdamServer, build_server
from anima.humanoid.spec import STAND, START, ZERO
from anima.humanoid.wire import state_to_pb

TARGET_RATIO = 1.3
BLOCK = 100  # calls per server before switching to the other
WARMUP = 200


class _WarpClock:
    """The monotonic clock plus an offset, so the set-up can skip the FSM's transitions."""

    def __init__(self) -> None:
        self._offset = 0.0

    def now(self) -> float:
        return time.monotonic() + self._offset

    def sleep_until(self, deadline: float, interrupt: threading.Event | None = None) -> bool:
        if interrupt is None:
            time.sleep(max(0.0, deadline - self.now()))
            return True
        return not interrupt.wait(max(0.0, deadline - self.now()))

    def wait(self, event: threading.Event, timeout: float | None = None) -> bool:
        return event.wait(None if timeout is None else max(0.0, timeout))

    def wait_notified(self, cond: threading.Condition, timeout: float | None = None) -> bool:
        return cond.wait(None if timeout is None else max(0.0, timeout))

    def skip(self, seconds: float) -> None:
        self._offset += seconds


class TrivialServicer(pb_grpc.RobotControlServicer):
    """adam_control.RobotControl whose GetRobotState answers one constant response."""

    def __init__(self, answer: pb.GetRobotStateResponse) -> None:
        self._answer = answer

    def GetRobotState(
        self, request: pb.GetRobotStateRequest, context: object
    ) -> pb.GetRobotStateResponse:
        return self._answer


@dataclass(frozen=True, kw_only=True)
class GrpcFigures:
    p50_us: float  # one GetRobotState round trip, microseconds
    p99_us: float
    calls_per_s: float  # back to back from one client thread


@dataclass(frozen=True, kw_only=True)
class GrpcBenchResult:
    calls: int  # GetRobotState calls timed per server
    ours: GrpcFigures  # the simulated Adam
    trivial: GrpcFigures  # a constant answer, same server shape
    ratio_p50: float  # ours ÷ trivial
    ratio_p99: float
    ratio_rate: float  # trivial calls/s ÷ ours: > 1 means ours is slower
    target_ratio: float  # the ratios are held to this
    response_bytes: int  # the serialized GetRobotStateResponse


def _standing_adam() -> SimulatedAdam:
    clock = _WarpClock()
    adam = SimulatedAdam(clock)
    for mode in (START, ZERO, STAND):
        adam.set_mode(mode)
        clock.skip(10.0)
    adam.stand_dynamic(True)
    adam.stand_action(0.1, 0.06, 0.25, -0.2)  # the slowest axis takes 2 s: ramps while timed
    return adam


def _figures(durations: list[float]) -> GrpcFigures:
    d = np.asarray(durations) * 1e6
    return GrpcFigures(
        p50_us=float(np.percentile(d, 50)),
        p99_us=float(np.percentile(d, 99)),
        calls_per_s=float(len(d) / (d.sum() / 1e6)),
    )


def run_grpc_bench(calls: int = 2000) -> GrpcBenchResult:
    """Time ``calls`` GetRobotState calls on each server, interleaved; see the module doc."""
    if calls < 1:
        raise ValueError(f"calls must be ≥ 1, got {calls}")
    adam = _standing_adam()
    ours = AdamServer(port=0, adam=adam)
    ours.start()
    constant = state_to_pb(adam.state())
    trivial, _, trivial_port = build_server(TrivialServicer(constant), bind="127.0.0.1", port=0)
    trivial.start()
    channels = [
        grpc.insecure_channel(f"127.0.0.1:{ours.port}"),
        grpc.insecure_channel(f"127.0.0.1:{trivial_port}"),
    ]
    try:
        stubs = [pb_grpc.RobotControlStub(ch) for ch in channels]
        request = pb.GetRobotStateRequest(get_state_flag=True)
        for stub in stubs:
            for _ in range(WARMUP):
                stub.GetRobotState(request, timeout=5.0)
        times: list[list[float]] = [[], []]
        perf = time.perf_counter
        while len(times[1]) < calls:
            n = min(BLOCK, calls - len(times[1]))
            for stub, out in zip(stubs, times, strict=True):
                call = stub.GetRobotState
                for _ in range(n):
                    begin = perf()
                    call(request, timeout=5.0)
                    out.append(perf() - begin)
    finally:
        for ch in channels:
            ch.close()
        ours.stop(grace_s=0.0)
        trivial.stop(0.0).wait(5.0)
    a, b = _figures(times[0]), _figures(times[1])
    return GrpcBenchResult(
        calls=calls,
        ours=a,
        trivial=b,
        ratio_p50=a.p50_us / b.p50_us,
        ratio_p99=a.p99_us / b.p99_us,
        ratio_rate=b.calls_per_s / a.calls_per_s,
        target_ratio=TARGET_RATIO,
        response_bytes=constant.ByteSize(),
    )
