"""The 100 Hz layered motion engine: moves, idle layers, offsets, overrides and safety."""

from anima.motion.engine import EngineState, MotionEngine
from anima.motion.idle import Blink, Breathing, IdleLayer
from anima.motion.moves import Decelerate, Goto, Hold, Keyframes, Move
from anima.motion.offsets import Offset
from anima.motion.timer import LoopStats

__all__ = [
    "Blink",
    "Breathing",
    "Decelerate",
    "EngineState",
    "Goto",
    "Hold",
    "IdleLayer",
    "Keyframes",
    "LoopStats",
    "MotionEngine",
    "Move",
    "Offset",
]
