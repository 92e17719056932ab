from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable
from typing import ClassVar as _ClassVar, Optional as _Optional

DESCRIPTOR: _descriptor.FileDescriptor

class SetModeRequest(_message.Message):
    __slots__ = ("mode",)
    MODE_FIELD_NUMBER: _ClassVar[int]
    mode: str
    def __init__(self, mode: _Optional[str] = ...) -> None: ...

class SetModeResponse(_message.Message):
    __slots__ = ("success", "message")
    SUCCESS_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    success: bool
    message: str
    def __init__(self, success: _Optional[bool] = ..., message: _Optional[str] = ...) -> None: ...

class SetStandMotionRequest(_message.Message):
    __slots__ = ("motion",)
    MOTION_FIELD_NUMBER: _ClassVar[int]
    motion: str
    def __init__(self, motion: _Optional[str] = ...) -> None: ...

class SetStandMotionResponse(_message.Message):
    __slots__ = ("success", "message")
    SUCCESS_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    success: bool
    message: str
    def __init__(self, success: _Optional[bool] = ..., message: _Optional[str] = ...) -> None: ...

class SetCarryBoxRequest(_message.Message):
    __slots__ = ("carry_box",)
    CARRY_BOX_FIELD_NUMBER: _ClassVar[int]
    carry_box: str
    def __init__(self, carry_box: _Optional[str] = ...) -> None: ...

class SetCarryBoxResponse(_message.Message):
    __slots__ = ("success", "message")
    SUCCESS_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    success: bool
    message: str
    def __init__(self, success: _Optional[bool] = ..., message: _Optional[str] = ...) -> None: ...

class SetActionRequest(_message.Message):
    __slots__ = ("stand_pitch", "stand_roll", "stand_yaw", "stand_height")
    STAND_PITCH_FIELD_NUMBER: _ClassVar[int]
    STAND_ROLL_FIELD_NUMBER: _ClassVar[int]
    STAND_YAW_FIELD_NUMBER: _ClassVar[int]
    STAND_HEIGHT_FIELD_NUMBER: _ClassVar[int]
    stand_pitch: float
    stand_roll: float
    stand_yaw: float
    stand_height: float
    def __init__(self, stand_pitch: _Optional[float] = ..., stand_roll: _Optional[float] = ..., stand_yaw: _Optional[float] = ..., stand_height: _Optional[float] = ...) -> None: ...

class SetActionResponse(_message.Message):
    __slots__ = ("success", "message")
    SUCCESS_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    success: bool
    message: str
    def __init__(self, success: _Optional[bool] = ..., message: _Optional[str] = ...) -> None: ...

class SetDynamicStandRequest(_message.Message):
    __slots__ = ("dynamic_stand",)
    DYNAMIC_STAND_FIELD_NUMBER: _ClassVar[int]
    dynamic_stand: bool
    def __init__(self, dynamic_stand: _Optional[bool] = ...) -> None: ...

class SetDynamicStandResponse(_message.Message):
    __slots__ = ("success", "message")
    SUCCESS_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    success: bool
    message: str
    def __init__(self, success: _Optional[bool] = ..., message: _Optional[str] = ...) -> None: ...

class SetSpeedRequest(_message.Message):
    __slots__ = ("x_speed", "y_speed", "yaw_speed", "continous")
    X_SPEED_FIELD_NUMBER: _ClassVar[int]
    Y_SPEED_FIELD_NUMBER: _ClassVar[int]
    YAW_SPEED_FIELD_NUMBER: _ClassVar[int]
    CONTINOUS_FIELD_NUMBER: _ClassVar[int]
    x_speed: float
    y_speed: float
    yaw_speed: float
    continous: bool
    def __init__(self, x_speed: _Optional[float] = ..., y_speed: _Optional[float] = ..., yaw_speed: _Optional[float] = ..., continous: _Optional[bool] = ...) -> None: ...

class SetSpeedResponse(_message.Message):
    __slots__ = ("success", "message")
    SUCCESS_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    success: bool
    message: str
    def __init__(self, success: _Optional[bool] = ..., message: _Optional[str] = ...) -> None: ...

class SetUnigaitCOMRequest(_message.Message):
    __slots__ = ("unigait_mode_com_x",)
    UNIGAIT_MODE_COM_X_FIELD_NUMBER: _ClassVar[int]
    unigait_mode_com_x: bool
    def __init__(self, unigait_mode_com_x: _Optional[bool] = ...) -> None: ...

class SetUnigaitCOMResponse(_message.Message):
    __slots__ = ("success", "message")
    SUCCESS_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    success: bool
    message: str
    def __init__(self, success: _Optional[bool] = ..., message: _Optional[str] = ...) -> None: ...

class SetErrorClearRequest(_message.Message):
    __slots__ = ("error_clear_flag",)
    ERROR_CLEAR_FLAG_FIELD_NUMBER: _ClassVar[int]
    error_clear_flag: bool
    def __init__(self, error_clear_flag: _Optional[bool] = ...) -> None: ...

class SetErrorClearResponse(_message.Message):
    __slots__ = ("success", "message")
    SUCCESS_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    success: bool
    message: str
    def __init__(self, success: _Optional[bool] = ..., message: _Optional[str] = ...) -> None: ...

class GetStandListRequest(_message.Message):
    __slots__ = ("mode_list_req",)
    MODE_LIST_REQ_FIELD_NUMBER: _ClassVar[int]
    mode_list_req: bool
    def __init__(self, mode_list_req: _Optional[bool] = ...) -> None: ...

class GetStandListResponse(_message.Message):
    __slots__ = ("success", "message", "mode_list", "motion_list", "action_list", "carrybox_list", "balance_control")
    SUCCESS_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    MODE_LIST_FIELD_NUMBER: _ClassVar[int]
    MOTION_LIST_FIELD_NUMBER: _ClassVar[int]
    ACTION_LIST_FIELD_NUMBER: _ClassVar[int]
    CARRYBOX_LIST_FIELD_NUMBER: _ClassVar[int]
    BALANCE_CONTROL_FIELD_NUMBER: _ClassVar[int]
    success: bool
    message: str
    mode_list: _containers.RepeatedScalarFieldContainer[str]
    motion_list: _containers.RepeatedScalarFieldContainer[str]
    action_list: _containers.RepeatedScalarFieldContainer[str]
    carrybox_list: _containers.RepeatedScalarFieldContainer[str]
    balance_control: str
    def __init__(self, success: _Optional[bool] = ..., message: _Optional[str] = ..., mode_list: _Optional[_Iterable[str]] = ..., motion_list: _Optional[_Iterable[str]] = ..., action_list: _Optional[_Iterable[str]] = ..., carrybox_list: _Optional[_Iterable[str]] = ..., balance_control: _Optional[str] = ...) -> None: ...

class GetRobotStateRequest(_message.Message):
    __slots__ = ("get_state_flag",)
    GET_STATE_FLAG_FIELD_NUMBER: _ClassVar[int]
    get_state_flag: bool
    def __init__(self, get_state_flag: _Optional[bool] = ...) -> None: ...

class GetRobotStateResponse(_message.Message):
    __slots__ = ("success", "message", "fsm_name", "current_motion", "current_action_list", "mode_enable_list", "motion_enable_list", "action_enable_list", "carrybox_enable_list", "balance_control_enable", "stand_pitch", "stand_roll", "stand_yaw", "stand_height", "x_vel", "y_vel", "yaw_vel", "balance_control_state", "motion_files_enable", "current_control_mode")
    SUCCESS_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    FSM_NAME_FIELD_NUMBER: _ClassVar[int]
    CURRENT_MOTION_FIELD_NUMBER: _ClassVar[int]
    CURRENT_ACTION_LIST_FIELD_NUMBER: _ClassVar[int]
    MODE_ENABLE_LIST_FIELD_NUMBER: _ClassVar[int]
    MOTION_ENABLE_LIST_FIELD_NUMBER: _ClassVar[int]
    ACTION_ENABLE_LIST_FIELD_NUMBER: _ClassVar[int]
    CARRYBOX_ENABLE_LIST_FIELD_NUMBER: _ClassVar[int]
    BALANCE_CONTROL_ENABLE_FIELD_NUMBER: _ClassVar[int]
    STAND_PITCH_FIELD_NUMBER: _ClassVar[int]
    STAND_ROLL_FIELD_NUMBER: _ClassVar[int]
    STAND_YAW_FIELD_NUMBER: _ClassVar[int]
    STAND_HEIGHT_FIELD_NUMBER: _ClassVar[int]
    X_VEL_FIELD_NUMBER: _ClassVar[int]
    Y_VEL_FIELD_NUMBER: _ClassVar[int]
    YAW_VEL_FIELD_NUMBER: _ClassVar[int]
    BALANCE_CONTROL_STATE_FIELD_NUMBER: _ClassVar[int]
    MOTION_FILES_ENABLE_FIELD_NUMBER: _ClassVar[int]
    CURRENT_CONTROL_MODE_FIELD_NUMBER: _ClassVar[int]
    success: bool
    message: str
    fsm_name: str
    current_motion: str
    current_action_list: _containers.RepeatedScalarFieldContainer[str]
    mode_enable_list: _containers.RepeatedScalarFieldContainer[str]
    motion_enable_list: _containers.RepeatedScalarFieldContainer[str]
    action_enable_list: _containers.RepeatedScalarFieldContainer[str]
    carrybox_enable_list: _containers.RepeatedScalarFieldContainer[str]
    balance_control_enable: str
    stand_pitch: float
    stand_roll: float
    stand_yaw: float
    stand_height: float
    x_vel: float
    y_vel: float
    yaw_vel: float
    balance_control_state: bool
    motion_files_enable: bool
    current_control_mode: int
    def __init__(self, success: _Optional[bool] = ..., message: _Optional[str] = ..., fsm_name: _Optional[str] = ..., current_motion: _Optional[str] = ..., current_action_list: _Optional[_Iterable[str]] = ..., mode_enable_list: _Optional[_Iterable[str]] = ..., motion_enable_list: _Optional[_Iterable[str]] = ..., action_enable_list: _Optional[_Iterable[str]] = ..., carrybox_enable_list: _Optional[_Iterable[str]] = ..., balance_control_enable: _Optional[str] = ..., stand_pitch: _Optional[float] = ..., stand_roll: _Optional[float] = ..., stand_yaw: _Optional[float] = ..., stand_height: _Optional[float] = ..., x_vel: _Optional[float] = ..., y_vel: _Optional[float] = ..., yaw_vel: _Optional[float] = ..., balance_control_state: _Optional[bool] = ..., motion_files_enable: _Optional[bool] = ..., current_control_mode: _Optional[int] = ...) -> None: ...

class CloseProgramRequest(_message.Message):
    __slots__ = ("close_flag",)
    CLOSE_FLAG_FIELD_NUMBER: _ClassVar[int]
    close_flag: bool
    def __init__(self, close_flag: _Optional[bool] = ...) -> None: ...

class CloseProgramResponse(_message.Message):
    __slots__ = ("success", "message")
    SUCCESS_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    success: bool
    message: str
    def __init__(self, success: _Optional[bool] = ..., message: _Optional[str] = ...) -> None: ...

class SetControlModeRequest(_message.Message):
    __slots__ = ("domain_id",)
    DOMAIN_ID_FIELD_NUMBER: _ClassVar[int]
    domain_id: int
    def __init__(self, domain_id: _Optional[int] = ...) -> None: ...

class SetControlModeResponse(_message.Message):
    __slots__ = ("success", "message", "current_mode")
    SUCCESS_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    CURRENT_MODE_FIELD_NUMBER: _ClassVar[int]
    success: bool
    message: str
    current_mode: int
    def __init__(self, success: _Optional[bool] = ..., message: _Optional[str] = ..., current_mode: _Optional[int] = ...) -> None: ...

class GetControlStateRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class GetControlStateResponse(_message.Message):
    __slots__ = ("success", "message", "domain_id")
    SUCCESS_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    DOMAIN_ID_FIELD_NUMBER: _ClassVar[int]
    success: bool
    message: str
    domain_id: int
    def __init__(self, success: _Optional[bool] = ..., message: _Optional[str] = ..., domain_id: _Optional[int] = ...) -> None: ...
