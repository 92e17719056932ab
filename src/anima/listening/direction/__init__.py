"""Where a voice comes from: direction of arrival from a microphone array (``listen.mics``),
or from the Reachy Mini daemon's own array (``driver.type: reachy_mini``).

docs/attention.md. :class:`VoiceDirection` is what the estimator hands on, once an audio frame
while someone speaks (the daemon's reader: once a reading while its array hears speech).

::

    types.py      VoiceDirection
    gcc_phat.py   GCC-PHAT between pairs; ArrayGeometry: the direction from the widest pairs
    own_voice.py  OwnVoiceGate: the robot's own voice is never a target (a barge-in lifts it)
    estimator.py  DirectionEstimator (gated by speech and the robot's own voice); DirectionSink
    daemon.py     DaemonDirection: the Reachy Mini daemon's doa, from its state stream (10 Hz)
"""

from anima.listening.direction.estimator import DirectionEstimator, DirectionSink
from anima.listening.direction.gcc_phat import ArrayGeometry
from anima.listening.direction.types import VoiceDirection

__all__ = ["ArrayGeometry", "DirectionEstimator", "DirectionSink", "VoiceDirection"]
