"""Whether a voice heard now is the robot's own: the gate every direction-of-arrival source
applies before attention may turn toward it (docs/attention.md, "Own voice").

The robot is playing when its loudspeaker's reference (what the echo canceller is told,
:class:`~anima.speech.reference.ReferenceReader`) is louder than :data:`PLAYING_RMS`, or when
the caller says so; a voice is its own while it plays and for :data:`OWN_HOLD_S` after (the
room still rings with it). A barge-in (:meth:`OwnVoiceGate.barge_in`: the listener heard a
person over the robot) lifts that until the robot has fallen silent: what is heard is the
person, whom the robot should face while it stops.
"""

from __future__ import annotations

import math

import numpy as np

from anima.speech.reference import ReferenceReader

PLAYING_RMS = 30.0  # a reference block above this RMS is the robot playing (the echo guard's)
OWN_HOLD_S = 0.3  # s after the robot stops in which its room still rings with its voice


class OwnVoiceGate:
    """See the module docstring. One thread calls :meth:`note` and :meth:`own`;
    :meth:`barge_in` may come from another (one flag, set or cleared whole)."""

    def __init__(self, reference: ReferenceReader | None = None, *, hold_s: float = OWN_HOLD_S):
        self._reference = reference
        self.hold_s = hold_s
        self._own_until = -math.inf  # time until which the robot's voice may be heard
        self._barge_in = False

    def barge_in(self) -> None:
        """A person talks over the robot: what is heard is theirs until the robot is silent."""
        self._barge_in = True

    def playing(self, samples: int | None = None) -> bool:
        """Whether the reference played: over the next ``samples`` (one microphone frame, in
        step with the microphone), or (None) over everything played since the last call."""
        if self._reference is None:
            return False
        block = self._reference.take() if samples is None else self._reference.frame(samples)
        if not len(block):
            return False
        played = block.astype(np.float64)
        return float(np.sqrt(np.mean(played * played))) > PLAYING_RMS

    def note(self, t: float, playing: bool) -> None:
        """What the loudspeaker did at ``t`` (runtime clock, s)."""
        if playing:
            self._own_until = t + self.hold_s
        elif t >= self._own_until:
            self._barge_in = False  # the robot is silent: a barge-in has done its work

    def own(self, t: float) -> bool:
        """Whether a voice heard at ``t`` is (or may be) the robot's own."""
        return t < self._own_until and not self._barge_in
