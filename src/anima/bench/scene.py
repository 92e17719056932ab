"""The scene every benchmark drives: all layers active on the shipped 28-channel body."""

from __future__ import annotations

import math

import numpy as np

from anima.body import Body
from anima.motion.engine import MotionEngine
from anima.motion.moves import Keyframes

_ANIMATED = ("r_shoulder_pitch", "r_elbow", "l_shoulder_pitch", "l_elbow", "brows", "torso_yaw")
LIPS = ("lip_open", "lip_wide", "lip_narrow")


def wave(body: Body) -> Keyframes:
    """A 3 s, 30 ms-per-frame arm-and-brow animation on channels the other layers leave free."""
    names = [n for n in _ANIMATED if n in body.names] or [body.names[-1]]
    t = np.arange(100) * 0.03
    cols = []
    for k, name in enumerate(names):
        ch = body.channel(name)
        mid, amp = (ch.min + ch.max) / 2, (ch.max - ch.min) * 0.3
        cols.append(mid + amp * np.sin(2 * math.pi * 0.5 * t + k))
    return Keyframes(body, names, np.stack(cols, axis=1), frame_period=0.03, name="bench-wave")


def set_gaze(engine: MotionEngine, k: int) -> None:
    """The k-th update of a face-tracker-like gaze offset (head and eyes)."""
    yaw, pitch = 0.3 * math.sin(k / 20), 0.1 * math.sin(k / 13)
    engine.set_offset("gaze", head=(0.0, pitch, yaw), deltas={"eyes_yaw": 20 * math.sin(k / 9)})


def set_sway(engine: MotionEngine, k: int) -> None:
    """The k-th 50 ms hop of a speech-sway-like offset."""
    engine.set_offset("sway", head=(0.02 * math.sin(k / 3), 0.03 * math.sin(k / 2), 0.0))


def set_lips(engine: MotionEngine) -> None:
    """A lips override evaluated every tick, as the speech service's viseme lookup is."""

    def lips(t: float) -> tuple[float, float, float]:
        phase = (t * 7.0) % 1.0
        return (30.0 + 120.0 * phase, 20.0 + 60.0 * (phase > 0.5), 20.0)

    engine.set_override_source("lips", LIPS, lips)
