"""The listening side's audio format: it lives in :mod:`anima.audio`, below both
:mod:`anima.speech` and :mod:`anima.listening` (the speech side hands the echo canceller what
the robot played in it); its names stay importable from here."""

from anima.audio import (
    FRAME_S,
    FRAME_SAMPLES,
    MAX_INPUT_RATE,
    MIN_INPUT_RATE,
    SAMPLE_RATE,
    Frame,
    Framer,
    StreamResampler,
    resample,
)

__all__ = [
    "FRAME_S",
    "FRAME_SAMPLES",
    "MAX_INPUT_RATE",
    "MIN_INPUT_RATE",
    "SAMPLE_RATE",
    "Frame",
    "Framer",
    "StreamResampler",
    "resample",
]
