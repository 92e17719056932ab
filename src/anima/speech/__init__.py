"""Speech: TTS engines behind one protocol, visemes, sway, audio sinks, the speech service.

``ENGINES`` maps a config name to a factory; each imports its engine lazily, so a missing
optional package only matters when that engine is chosen.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING

from anima.errors import AnimaError, ConfigError
from anima.speech.base import AudioChunk, AudioSink, Cancel, PhonemeMark, TTSEngine, VisemeMark

if TYPE_CHECKING:
    from anima.config import SpeechConfig

log = logging.getLogger(__name__)


def _piper(config: SpeechConfig) -> TTSEngine:
    from anima.speech.piper import PiperEngine, import_piper

    import_piper()  # now, before the motion loop runs: an import holds the GIL ~20 ms
    return PiperEngine()


def _espeak(config: SpeechConfig) -> TTSEngine:
    from anima.speech.espeak import EspeakEngine

    return EspeakEngine(wpm=config.espeak_wpm)


def _azure(config: SpeechConfig) -> TTSEngine:
    from anima.speech.azure import AzureEngine

    return AzureEngine()


ENGINES: dict[str, Callable[[SpeechConfig], TTSEngine]] = {
    "piper": _piper,
    "espeak": _espeak,
    "azure": _azure,
}


def load_engines(config: SpeechConfig) -> tuple[list[TTSEngine], list[str]]:
    """The configured engines, in order, and why the others could not be made.

    Engines import their packages here, which the runtime does before its motion loop starts
    (importing onnxruntime holds the GIL ~20 ms: two missed ticks if the loop were running);
    voices load later, on the speech thread.
    """
    engines: list[TTSEngine] = []
    problems: list[str] = []
    for name in config.engines:
        factory = ENGINES.get(name)
        if factory is None:
            raise ConfigError(
                f"speech.engines: unknown engine {name!r} (known: {', '.join(ENGINES)})"
            )
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
    "TTSEngine",
    "VisemeMark",
    "load_engines",
]
