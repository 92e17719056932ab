"""The simulated Adam over real gRPC on 127.0.0.1:0, driven with the raw proto stub only.

The server's FSM runs on a fake clock the test advances, so the documented flow, the 5 s speed
lapse and the control-mode switch are exact without waiting.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc

from anima.humanoid import adam_control_pb2 as pb
from anima.humanoid.server import AdamServer
from anima.humanoid.spec import CONTROL_SWITCH_S, ENTER_S, MOTIONS, SPEED_LAPSE_S

pytestmark = pytest.mark.integration

PROTO = Path(__file__).parents[2] / "src" / "anima" / "humanoid" / "adam_control.proto"


def test_the_documented_flow_with_the_raw_stub(served) -> None:
    stub, clock = served.stub, served.clock
    lists = stub.GetStandList(pb.GetStandListRequest(mode_list_req=True))
    assert list(lists.mode_list) == ["Start", "Zero", "Stand", "Walk", "Run", "SingleStand", "Stop"]
    for mode in ("Start", "Zero", "Stand"):
        assert mode in served.state().mode_enable_list  # query before command
        answer = stub.SetMode(pb.SetModeRequest(mode=mode))
        assert answer.success, answer.message
        clock.advance(ENTER_S[mode])
        assert served.state().fsm_name == mode

    assert "Greeting" in served.state().motion_enable_list
    assert stub.SetStandMotion(pb.SetStandMotionRequest(motion="Greeting")).success
    s = served.state()
    assert s.current_motion == "Greeting"
    assert list(s.motion_enable_list) == []
    clock.advance(MOTIONS["Greeting"])
    assert served.state().current_motion == ""

    assert stub.SetMode(pb.SetModeRequest(mode="Walk")).success
    clock.advance(ENTER_S["Walk"])
    answer = stub.SetSpeed(pb.SetSpeedRequest(x_speed=0.5, y_speed=0.0, yaw_speed=0.2))
    assert answer.success, answer.message
    clock.advance(1.0)
    s = served.state()
    assert (s.fsm_name, s.x_vel, s.yaw_vel) == ("Walk", 0.5, 0.2)

    assert stub.SetMode(pb.SetModeRequest(mode="Stop")).success
    s = served.state()
    assert (s.fsm_name, s.x_vel) == ("Stop", 0.0)
    assert list(s.mode_enable_list) == ["Stop"]
    assert stub.SetErrorClear(pb.SetErrorClearRequest(error_clear_flag=True)).success
    assert list(served.state().mode_enable_list) == ["Start", "Stop"]


def test_rejections_are_success_false_with_a_reason(served) -> None:
    stub = served.stub
    answers = [
        stub.SetMode(pb.SetModeRequest(mode="Walk")),
        stub.SetStandMotion(pb.SetStandMotionRequest(motion="Greeting")),
        stub.SetStandCarryBox(pb.SetCarryBoxRequest(carry_box="1")),
        stub.SetStandAction(pb.SetActionRequest(stand_pitch=float("nan"))),
        stub.SetStandDynamic(pb.SetDynamicStandRequest(dynamic_stand=True)),
        stub.SetSpeed(pb.SetSpeedRequest(x_speed=0.1)),
        stub.AutoUnigaitCOM(pb.SetUnigaitCOMRequest(unigait_mode_com_x=True)),
        stub.SetErrorClear(pb.SetErrorClearRequest(error_clear_flag=False)),
        stub.CloseProgram(pb.CloseProgramRequest(close_flag=False)),
        stub.SetControlMode(pb.SetControlModeRequest(domain_id=5)),
    ]
    for answer in answers:
        assert not answer.success
        assert answer.message  # a specific reason, never empty
    assert answers[0].message == "cannot go from Stop to Walk (from Stop: Start, Stop)"
    assert answers[3].message == "stand_pitch is not finite (nan)"


def test_speed_lapses_after_5_s_over_grpc(served) -> None:
    served.reach("Walk")
    served.stub.SetSpeed(pb.SetSpeedRequest(x_speed=0.6))
    served.clock.advance(SPEED_LAPSE_S - 0.01)
    assert served.state().x_vel == pytest.approx(0.6)
    served.clock.advance(2.0)
    assert served.state().x_vel == 0.0
    served.stub.SetSpeed(pb.SetSpeedRequest(x_speed=0.6, continous=True))
    served.clock.advance(30.0)
    assert served.state().x_vel == pytest.approx(0.6)


def test_control_mode_switch_over_grpc(served) -> None:
    stub, clock = served.stub, served.clock
    assert stub.GetControlState(pb.GetControlStateRequest()).domain_id == -1
    clock.advance(1.0)
    answer = stub.SetControlMode(pb.SetControlModeRequest(domain_id=1))
    assert answer.success
    assert answer.current_mode == 0  # returns at once, with what was in force
    clock.advance(CONTROL_SWITCH_S / 2)
    assert stub.GetControlState(pb.GetControlStateRequest()).domain_id == 0
    clock.advance(CONTROL_SWITCH_S / 2)
    assert stub.GetControlState(pb.GetControlStateRequest()).domain_id == 1
    assert served.state().current_control_mode == 1


def test_health_and_reflection(served) -> None:
    health = health_pb2_grpc.HealthStub(served.channel)
    for service in ("", "adam_control.RobotControl"):
        answer = health.Check(health_pb2.HealthCheckRequest(service=service), timeout=5.0)
        assert answer.status == health_pb2.HealthCheckResponse.SERVING
    reflect = reflection_pb2_grpc.ServerReflectionStub(served.channel)
    request = reflection_pb2.ServerReflectionRequest(list_services="")
    (answer,) = list(reflect.ServerReflectionInfo(iter([request]), timeout=5.0))
    names = {s.name for s in answer.list_services_response.service}
    assert "adam_control.RobotControl" in names
    assert "grpc.health.v1.Health" in names


def test_undecodable_bytes_do_not_hurt_the_server(served) -> None:
    raw = served.channel.unary_unary(
        "/adam_control.RobotControl/SetMode",
        request_serializer=lambda b: b,
        response_deserializer=lambda b: b,
    )
    with pytest.raises(grpc.RpcError) as caught:
        raw(b"\x0a\x05\xff\xfe\xfd\xfc\xfb", timeout=5.0)  # a string field that is not UTF-8
    assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT  # the client's fault
    assert served.state().fsm_name == "Stop"


def test_close_program_refused_while_powered_then_shuts_down_gracefully(served) -> None:
    served.reach("Start")
    answer = served.stub.CloseProgram(pb.CloseProgramRequest(close_flag=True))
    assert not answer.success
    assert "only in Stop" in answer.message
    served.stub.SetMode(pb.SetModeRequest(mode="Stop"))
    answer = served.stub.CloseProgram(pb.CloseProgramRequest(close_flag=True))
    assert answer.success  # answered before the server goes
    assert served.server.wait(5.0)
    with pytest.raises(grpc.RpcError) as caught:
        served.state()
    assert caught.value.code() == grpc.StatusCode.UNAVAILABLE


def test_a_taken_port_is_a_clear_error(served) -> None:
    from anima.errors import HumanoidError

    with pytest.raises(HumanoidError, match=f"cannot listen on 127.0.0.1:{served.server.port}"):
        AdamServer(port=served.server.port).start()


def test_stubs_generated_from_the_proto_alone_talk_to_the_server(
    served,
    tmp_path: Path,
) -> None:
    """Wire compatibility: a client compiled from the .proto, with no anima code, in its own
    process (its messages would clash with ours in this process's descriptor pool)."""
    script = textwrap.dedent(
        f"""
        import sys, grpc
        from grpc_tools import protoc
        out = {str(tmp_path)!r}
        assert protoc.main(["protoc", "-I{PROTO.parent}", "--python_out=" + out,
                            "--grpc_python_out=" + out, "{PROTO.name}"]) == 0
        sys.path.insert(0, out)
        import adam_control_pb2 as pb, adam_control_pb2_grpc as pbg
        stub = pbg.RobotControlStub(grpc.insecure_channel("{served.server.address}"))
        s = stub.GetRobotState(pb.GetRobotStateRequest(get_state_flag=True), timeout=5)
        assert (s.fsm_name, list(s.mode_enable_list)) == ("Stop", ["Start", "Stop"]), s
        assert stub.SetMode(pb.SetModeRequest(mode="Start"), timeout=5).success
        r = stub.SetSpeed(pb.SetSpeedRequest(x_speed=0.1, continous=True), timeout=5)
        assert not r.success and "needs Walk or Run" in r.message, r
        print("ok")
        """
    )
    env = {**os.environ, "PYTHONPATH": ""}
    done = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"
