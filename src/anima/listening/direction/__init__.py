"""Where a voice comes from: direction of arrival from a microphone array (``listen.mics``).

docs/attention.md. :class:`VoiceDirection` is what the estimator hands on, once an audio frame
while someone speaks.

::

    types.py      VoiceDirection
    gcc_phat.py   GCC-PHAT between pairs; ArrayGeometry: the direction from the widest pairs
    own_voice.py  OwnVoiceGate: the robot's own voice is never a target (a barge-in lifts it)
    estimator.py  DirectionEstimator (gated by speech and the robot's own voice); DirectionSink
"""

from anima.listening.direction.estimator import DirectionEstimator, DirectionSink
from anima.listening.direction.gcc_phat import ArrayGeometry
from anima.listening.direction.types import VoiceDirection

__all__ = ["ArrayGeometry", "DirectionEstimator", "DirectionSink", "VoiceDirection"]
