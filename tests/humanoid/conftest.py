"""The simulated Adam on a fake clock, alone or served on 127.0.0.1:0, and a raw proto stub."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

import grpc
import pytest

from anima.humanoid import adam_control_pb2 as pb
from anima.humanoid import adam_control_pb2_grpc as pb_grpc
from anima.humanoid.fsm import SimulatedAdam
from anima.humanoid.server import AdamServer
from anima.humanoid.spec import ENTER_S, NEXT_MODES, STAND, START, STOP, ZERO
from anima.testing import FakeClock

# The way from Stop to each mode, as the documented flow goes.
PATHS: dict[str, tuple[str, ...]] = {
    STOP: (),
    START: (START,),
    ZERO: (START, ZERO),
    STAND: (START, ZERO, STAND),
    **{m: (START, ZERO, STAND, m) for m in NEXT_MODES[STAND]},
}


def reach(adam: SimulatedAdam, clock: FakeClock, mode: str) -> None:
    """Walk ``adam`` from Stop to ``mode``, letting each transition finish."""
    for step in PATHS[mode]:
        reply = adam.set_mode(step)
        assert reply.success, reply.message
        clock.advance(ENTER_S[step])
    assert adam.state().fsm_name == mode


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def adam(clock: FakeClock) -> SimulatedAdam:
    return SimulatedAdam(clock)


@pytest.fixture
def walk_to(adam: SimulatedAdam, clock: FakeClock) -> Callable[[str], None]:
    """``walk_to(mode)``: the fixture's Adam, from Stop to ``mode``."""
    return lambda mode: reach(adam, clock, mode)


@dataclass
class Served:
    server: AdamServer
    clock: FakeClock
    channel: grpc.Channel
    stub: pb_grpc.RobotControlStub

    @property
    def adam(self) -> SimulatedAdam:
        return self.server.adam

    def reach(self, mode: str) -> None:
        reach(self.server.adam, self.clock, mode)

    def state(self) -> pb.GetRobotStateResponse:
        answer: pb.GetRobotStateResponse = self.stub.GetRobotState(
            pb.GetRobotStateRequest(get_state_flag=True), timeout=5.0
        )
        return answer


@pytest.fixture
def served(clock: FakeClock) -> Iterator[Served]:
    """A real gRPC server on 127.0.0.1:0 whose simulated Adam runs on ``clock``."""
    server = AdamServer(port=0, clock=clock)
    server.start()
    channel = grpc.insecure_channel(server.address)
    try:
        yield Served(server, clock, channel, pb_grpc.RobotControlStub(channel))
    finally:
        channel.close()
        server.stop(grace_s=0.0)
