"""What the robot is: channels, limits, roles, calibrations and postures (``checker.ini``)."""

from anima.body.checker_ini import default_body_path, load_body, parse_body
from anima.body.model import (
    BoardInfo,
    Body,
    Calibration,
    Channel,
    HEAD_ROLES,
    FloatArray,
    LipWidthRule,
    Posture,
    Role,
)

__all__ = [
    "BoardInfo",
    "Body",
    "Calibration",
    "Channel",
    "HEAD_ROLES",
    "FloatArray",
    "LipWidthRule",
    "Posture",
    "Role",
    "default_body_path",
    "load_body",
    "parse_body",
]
