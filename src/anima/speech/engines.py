"""What makes each TTS engine from the ``speech`` section (named in
:data:`anima.config.speech_parts.ENGINES`). Each imports its package here, which the runtime does
before its motion loop starts: importing onnxruntime holds the GIL ~20 ms."""

from __future__ import annotations

from typing import TYPE_CHECKING

from anima.speech.base import TTSEngine

if TYPE_CHECKING:
    from anima.config import SpeechConfig


def make_piper(config: SpeechConfig) -> TTSEngine:
    from anima.speech.piper.piper import PiperEngine
    from anima.speech.piper.voice import import_piper

    import_piper()  # now, before the motion loop runs: an import holds the GIL ~20 ms
    return PiperEngine()


def make_espeak(config: SpeechConfig) -> TTSEngine:
    from anima.speech.espeak.espeak import EspeakEngine

    return EspeakEngine(wpm=config.espeak_wpm)


def make_azure(config: SpeechConfig) -> TTSEngine:
    from anima.speech.azure.azure import AzureEngine

    return AzureEngine()
