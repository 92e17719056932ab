"""The estimate a direction-of-arrival method hands on."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, kw_only=True)
class VoiceDirection:
    """Where the sound of one audio frame came from, in the robot's frame (x forward, y left,
    z up): ``azimuth`` from x toward y (radians; positive: the robot's left), ``elevation``
    above the x–y plane (radians; 0 when the array is flat and cannot tell).

    ``on_head``: the array turns with the head (``listen.mics_mount: head``; Reachy Mini's), so
    the direction is in the head's frame as it was while the sound was heard — the
    ``span_s`` of audio ending at ``t``; attention turns it into the robot's frame with the
    head's pose at the middle of that span (:meth:`heard_at`)."""

    t: float  # the frame's end on the runtime clock (seconds)
    azimuth: float  # radians, (-π, π]
    elevation: float = 0.0  # radians
    confidence: float  # 0 to 1: how sharp the correlation peak was
    speech: bool  # the VAD heard a voice in this frame
    own_voice: bool = False  # the robot was speaking and the echo canceller says it is its own
    on_head: bool = False  # in the head's frame (an array on the head), not the robot's
    span_s: float = 0.0  # how much audio, ending at t, the estimate is from (seconds)

    @property
    def heard_at(self) -> float:
        """The middle of the audio the estimate is from (runtime clock, seconds)."""
        return self.t - self.span_s / 2.0
