"""The capabilities an engine may add to :class:`TTSEngine` are declared, not guessed:
Piper prepares ahead (its clause cache), eSpeak NG and Azure do not, and the speech worker
prepares only through an engine that declares it."""

from __future__ import annotations

import logging

import pytest

from anima.speech.azure.azure import AzureEngine
from anima.speech.base import PreparesAhead, TTSEngine
from anima.speech.espeak.espeak import EspeakEngine
from anima.speech.piper.piper import PiperEngine
from anima.speech.synthesis import prepare
from anima.testing.tts import ScriptedEngine

pytestmark = pytest.mark.fast


class PreparingVoice(ScriptedEngine):
    """The scripted voice with a cache: notes what it was asked to prepare."""

    def __init__(self, *, locales: tuple[str, ...] = ("en",), fails: bool = False) -> None:
        super().__init__(name="preparing", locales=locales)
        self.prepared: list[tuple[str, str]] = []
        self._fails = fails

    def prepare(self, text: str, locale: str = "en-US") -> int:
        if self._fails:
            raise RuntimeError("no room in the cache")
        self.prepared.append((text, locale))
        return 1


def test_piper_declares_it_prepares_ahead_and_the_others_do_not() -> None:
    assert isinstance(PiperEngine(), PreparesAhead)
    assert isinstance(PiperEngine(), TTSEngine)
    assert not isinstance(EspeakEngine(), PreparesAhead)
    assert not isinstance(AzureEngine(environ={}, env_file=None), PreparesAhead)
    assert not isinstance(ScriptedEngine(), PreparesAhead)


def test_the_engine_that_would_speak_the_text_prepares_it() -> None:
    german, english = PreparingVoice(locales=("de",)), PreparingVoice()
    prepare([german, english], "Sorry, I didn't catch that.", "en-US")
    assert english.prepared == [("Sorry, I didn't catch that.", "en-US")]
    assert german.prepared == []


def test_an_engine_without_the_capability_is_left_alone() -> None:
    behind = PreparingVoice()
    prepare([ScriptedEngine(), behind], "hello", "en-US")  # the first speaks English: no cache
    assert behind.prepared == []
    prepare([], "hello", "en-US")  # no engine at all: nothing to do


def test_a_text_that_cannot_be_prepared_is_logged_not_raised(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with caplog.at_level(logging.WARNING, logger="anima.speech.synthesis"):
        prepare([PreparingVoice(fails=True)], "hello", "en-US")
    assert "cannot prepare 'hello': no room in the cache" in caplog.text
