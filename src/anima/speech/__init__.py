"""Speech: TTS engines behind one protocol, visemes, sway, audio sinks, the speech service.

``ENGINES`` (:mod:`anima.config.speech_parts`) names each engine's maker, imported when it is made,
so a missing optional package only matters when that engine is chosen; a name it lacks is
refused when the config loads.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from anima.config.speech_parts import ENGINES
from anima.errors import AnimaError
from anima.speech.base import (
    AudioChunk,
    AudioSink,
    Cancel,
    PhonemeMark,
    PreparesAhead,
    TTSEngine,
    VisemeMark,
)

if TYPE_CHECKING:
    from anima.config import SpeechConfig

log = logging.getLogger(__name__)


def load_engines(config: SpeechConfig) -> tuple[list[TTSEngine], list[str]]:
    """The configured engines, in order, and why the others could not be made.

    Engines import their packages here, which the runtime does before its motion loop starts
    (importing onnxruntime holds the GIL ~20 ms: two missed ticks if the loop were running);
    voices load later, on the speech thread.
    """
    engines: list[TTSEngine] = []
    problems: list[str] = []
    for name in config.engines:
        factory = ENGINES.load(name)  # checked when the config loaded; again for code
        try:
            engines.append(factory(config))
        except (AnimaError, ImportError, OSError) as exc:
            problems.append(f"{name}: {exc}")
            log.info("speech engine %s unavailable: %s", name, exc)
    return engines, problems


__all__ = [
    "ENGINES",
    "AudioChunk",
    "AudioSink",
    "Cancel",
    "PhonemeMark",
    "PreparesAhead",
    "TTSEngine",
    "VisemeMark",
    "load_engines",
]
