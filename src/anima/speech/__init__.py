"""Speech: TTS engines behind one protocol, visemes, sway, audio sinks, the speech service.

``ENGINES`` (:mod:`anima.config.speech_parts`) names each engine's maker, imported when it is made,
so a missing optional package only matters when that engine is chosen; a name it lacks is
refused when the config loads.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
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

    Engines import their packages here, at start; voices load later (Piper's in its own
    process: :func:`close_engines` ends it).
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


def close_engines(engines: Sequence[TTSEngine]) -> None:
    """End what the engines run beside this process (Piper's voice worker); the speech service
    does it at stop, and whatever else loads engines (the doctor, the benches) when done."""
    for engine in engines:
        close = getattr(engine, "close", None)
        if callable(close):
            close()


__all__ = [
    "ENGINES",
    "AudioChunk",
    "AudioSink",
    "Cancel",
    "PhonemeMark",
    "PreparesAhead",
    "TTSEngine",
    "VisemeMark",
    "close_engines",
    "load_engines",
]
