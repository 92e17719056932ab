"""The 100 Hz layered motion engine: moves, idle layers, offsets, overrides and safety."""

from anima.motion import compiled as _compiled

# before any other module of the package: its compiled build, when one matches these sources
_compiled.activate(__path__)

from anima.motion.engine import EngineState, MotionEngine  # noqa: E402
from anima.motion.idle import Blink, Breathing, IdleLayer  # noqa: E402
from anima.motion.moves import Decelerate, Goto, Hold, Keyframes, Move  # noqa: E402
from anima.motion.offsets import Offset  # noqa: E402
from anima.motion.timer import LoopStats  # noqa: E402

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
