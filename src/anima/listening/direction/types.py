"""The estimate a direction-of-arrival method hands on."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, kw_only=True)
class VoiceDirection:
    """Where the sound of one audio frame came from, in the robot's frame (x forward, y left,
    z up): ``azimuth`` from x toward y (radians; positive: the robot's left), ``elevation``
    above the x–y plane (radians; 0 when the array is flat and cannot tell)."""

    t: float  # the frame's end on the runtime clock (seconds)
    azimuth: float  # radians, (-π, π]
    elevation: float = 0.0  # radians
    confidence: float  # 0 to 1: how sharp the correlation peak was
    speech: bool  # the VAD heard a voice in this frame
    own_voice: bool = False  # the robot was speaking and the echo canceller says it is its own
