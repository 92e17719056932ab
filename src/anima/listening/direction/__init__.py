"""Where a voice comes from: direction of arrival from a microphone array (``listen.mics``).

docs/attention.md. :class:`VoiceDirection` is what the estimator hands on, once an audio frame
while someone speaks.
"""

from anima.listening.direction.types import VoiceDirection

__all__ = ["VoiceDirection"]
