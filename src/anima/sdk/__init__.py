"""The Python SDK: :class:`Robot`, one facade for scripts, in-process, over MQTT or over REST."""

from anima.sdk.backend import HumanoidSnapshot, RobotSnapshot
from anima.sdk.handles import AnimationHandle, SpeechHandle
from anima.sdk.robot import Robot

__all__ = ["AnimationHandle", "HumanoidSnapshot", "Robot", "RobotSnapshot", "SpeechHandle"]
