"""50 clients hammer GetRobotState while another walks the FSM round and round: every answer
arrives, and every snapshot is consistent (taken under one lock, never half-updated)."""

from __future__ import annotations

import threading
import time

import grpc
import pytest

from anima.humanoid import adam_control_pb2 as pb
from anima.humanoid import adam_control_pb2_grpc as pb_grpc
from anima.humanoid.spec import ACTIONS, ENTER_S, MODES, MOTIONS, NEXT_MODES, STOP

pytestmark = pytest.mark.fast

CLIENTS = 50
CALLS = 40  # per client
BOUND_S = 10.0
ROUND = ("Start", "Zero", "Stand", "Walk", "Run", "Stand", "SingleStand", "Stand", "Stop")


def inconsistencies(s: pb.GetRobotStateResponse) -> list[str]:
    """What is wrong with one snapshot, if anything."""
    bad = []
    modes = tuple(s.mode_enable_list)
    if not s.success or s.fsm_name not in MODES:
        bad.append(f"bad answer {s.fsm_name!r} {s.message!r}")
    if STOP not in modes:
        bad.append("Stop not accepted")
    idle = s.message == f"in {s.fsm_name}" or s.message.startswith("drives off")
    if idle and set(modes) != {*NEXT_MODES[s.fsm_name], STOP}:
        bad.append(f"idle in {s.fsm_name} but modes {modes}")
    if not idle and s.fsm_name != STOP and modes != (STOP,):
        bad.append(f"busy ({s.message}) but modes {modes}")
    stand_lists = (s.motion_enable_list, s.action_enable_list, s.carrybox_enable_list)
    if s.fsm_name != "Stand" and any(stand_lists):
        bad.append(f"Stand lists in {s.fsm_name}")
    full = tuple(s.motion_enable_list) == tuple(MOTIONS) and tuple(s.action_enable_list) == ACTIONS
    if s.fsm_name == "Stand" and idle and not full:
        bad.append("idle in Stand without its lists")
    if s.current_motion and s.fsm_name != "Stand":
        bad.append(f"motion {s.current_motion} in {s.fsm_name}")
    return bad


def test_fifty_readers_and_one_writer(served) -> None:
    address, clock = served.server.address, served.clock
    start = threading.Barrier(CLIENTS + 1)
    stop_writer = threading.Event()
    problems: list[str] = []
    answers = [0] * CLIENTS
    total = CLIENTS * CALLS
    seen: set[str] = set()  # the modes readers saw: the writer really moved the robot
    lock = threading.Condition()  # notified at every answer: the writer waits for readers

    def reader(k: int) -> None:
        with grpc.insecure_channel(address) as channel:
            stub = pb_grpc.RobotControlStub(channel)
            start.wait(timeout=BOUND_S)
            for _ in range(CALLS):
                try:
                    s = stub.GetRobotState(pb.GetRobotStateRequest(get_state_flag=True), timeout=5)
                except grpc.RpcError as exc:
                    with lock:
                        problems.append(f"client {k}: {exc}")
                    return
                found = inconsistencies(s)
                with lock:
                    answers[k] += 1
                    seen.add(s.fsm_name)
                    lock.notify_all()
                    problems.extend(f"client {k}: {p}" for p in found)

    def writer() -> None:
        with grpc.insecure_channel(address) as channel:
            stub = pb_grpc.RobotControlStub(channel)
            start.wait(timeout=BOUND_S)
            while not stop_writer.is_set():
                for mode in ROUND:
                    answer = stub.SetMode(pb.SetModeRequest(mode=mode), timeout=5)
                    if not answer.success:
                        with lock:
                            problems.append(f"writer: {mode}: {answer.message}")
                        return
                    for _ in range(4):  # readers see the transition in steps
                        clock.advance(ENTER_S[mode] / 4)
                        with lock:  # at least one answer at this step (unless all are done)
                            asked = sum(answers)
                            lock.wait_for(
                                lambda n=asked: sum(answers) > n or sum(answers) == total,
                                timeout=1.0,
                            )
                stub.SetErrorClear(pb.SetErrorClearRequest(error_clear_flag=True), timeout=5)

    threads = [threading.Thread(target=reader, args=(k,), daemon=True) for k in range(CLIENTS)]
    writer_thread = threading.Thread(target=writer, daemon=True)
    began = time.monotonic()
    for t in (*threads, writer_thread):
        t.start()
    for t in threads:
        t.join(timeout=max(0.1, BOUND_S - (time.monotonic() - began)))
    stop_writer.set()
    writer_thread.join(timeout=5.0)
    assert not any(t.is_alive() for t in threads), "readers did not finish within 10 s"
    assert not writer_thread.is_alive()
    assert problems == []
    assert answers == [CALLS] * CLIENTS
    assert len(seen) >= 3, seen
