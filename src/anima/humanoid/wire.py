"""Between the typed values of :mod:`anima.humanoid.spec` and the adam_control messages.

The only module besides the generated stubs that knows the messages' fields; the server uses it
to answer, the client to read the answers back into the same frozen dataclasses.
"""

from __future__ import annotations

from anima.humanoid import adam_control_pb2 as pb
from anima.humanoid.spec import RobotState, StandLists

SERVICE = "adam_control.RobotControl"  # the fully qualified service name (health, reflection)


def state_to_pb(s: RobotState) -> pb.GetRobotStateResponse:
    return pb.GetRobotStateResponse(
        success=True,
        message=s.message,
        fsm_name=s.fsm_name,
        current_motion=s.current_motion,
        current_action_list=s.current_action_list,
        mode_enable_list=s.mode_enable_list,
        motion_enable_list=s.motion_enable_list,
        action_enable_list=s.action_enable_list,
        carrybox_enable_list=s.carrybox_enable_list,
        balance_control_enable=s.balance_control_enable,
        stand_pitch=s.stand_pitch,
        stand_roll=s.stand_roll,
        stand_yaw=s.stand_yaw,
        stand_height=s.stand_height,
        x_vel=s.x_vel,
        y_vel=s.y_vel,
        yaw_vel=s.yaw_vel,
        balance_control_state=s.balance_control_state,
        motion_files_enable=s.motion_files_enable,
        current_control_mode=s.current_control_mode,
    )


def state_from_pb(m: pb.GetRobotStateResponse) -> RobotState:
    return RobotState(
        message=m.message,
        fsm_name=m.fsm_name,
        current_motion=m.current_motion,
        current_action_list=tuple(m.current_action_list),
        mode_enable_list=tuple(m.mode_enable_list),
        motion_enable_list=tuple(m.motion_enable_list),
        action_enable_list=tuple(m.action_enable_list),
        carrybox_enable_list=tuple(m.carrybox_enable_list),
        balance_control_enable=m.balance_control_enable,
        stand_pitch=m.stand_pitch,
        stand_roll=m.stand_roll,
        stand_yaw=m.stand_yaw,
        stand_height=m.stand_height,
        x_vel=m.x_vel,
        y_vel=m.y_vel,
        yaw_vel=m.yaw_vel,
        balance_control_state=m.balance_control_state,
        motion_files_enable=m.motion_files_enable,
        current_control_mode=m.current_control_mode,
    )


def lists_to_pb(s: StandLists) -> pb.GetStandListResponse:
    return pb.GetStandListResponse(
        success=True,
        message="",
        mode_list=s.mode_list,
        motion_list=s.motion_list,
        action_list=s.action_list,
        carrybox_list=s.carrybox_list,
        balance_control=s.balance_control,
    )


def lists_from_pb(m: pb.GetStandListResponse) -> StandLists:
    return StandLists(
        mode_list=tuple(m.mode_list),
        motion_list=tuple(m.motion_list),
        action_list=tuple(m.action_list),
        carrybox_list=tuple(m.carrybox_list),
        balance_control=m.balance_control,
    )
