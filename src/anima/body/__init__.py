"""What the robot is: channels, limits, roles, calibrations and postures (``checker.ini``)."""

from anima.body.checker_ini import default_body_path, load_body, parse_body
from anima.body.model import (
    HEAD_ROLES,
    BoardInfo,
    Body,
    Calibration,
    Channel,
    FloatArray,
    LipWidthRule,
    Posture,
    Role,
)

__all__ = [
    "HEAD_ROLES",
    "BoardInfo",
    "Body",
    "Calibration",
    "Channel",
    "FloatArray",
    "LipWidthRule",
    "Posture",
    "Role",
    "default_body_path",
    "load_body",
    "parse_body",
]
