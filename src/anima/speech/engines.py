"""What makes each TTS engine from the ``speech`` section (named in
:data:`anima.config.speech_parts.ENGINES`). Each imports its package here, at start; Piper in its
own process (``speech.piper_process``, the default) is only looked for: its worker imports Piper
and onnxruntime, whose initialisation held the interpreter ~35 ms (3 ticks missed)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from anima.speech.base import TTSEngine

if TYPE_CHECKING:
    from anima.config import SpeechConfig


def make_piper(config: SpeechConfig) -> TTSEngine:
    from anima.speech.piper.piper import PiperEngine
    from anima.speech.piper.voice import import_piper, voice_files
    from anima.speech.piper.voicefile import cache_root

    store = cache_root() / "speech"  # the prepared replies, kept between runs
    if config.piper_process:
        voice_files(None, None)  # installed? (MissingDependencyError, or eSpeak takes over)
        return PiperEngine(process=True, idle_exit_s=config.piper_idle_exit_s, store=store)
    import_piper()  # in this process: imported now, at start rather than at the first sentence
    return PiperEngine(store=store)


def make_espeak(config: SpeechConfig) -> TTSEngine:
    from anima.speech.espeak.espeak import EspeakEngine

    return EspeakEngine(wpm=config.espeak_wpm)


def make_azure(config: SpeechConfig) -> TTSEngine:
    from anima.speech.azure.azure import AzureEngine

    return AzureEngine()
