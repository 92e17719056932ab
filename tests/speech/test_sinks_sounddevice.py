"""The sound card's dependencies, when they are missing: each absence has its own fix."""

from __future__ import annotations

import importlib.abc
import sys
from typing import Any

import pytest

from anima.errors import MissingDependencyError, SpeechError
from anima.listening.sources import MicrophoneSource
from anima.speech.sinks import SoundDeviceSink, import_sounddevice

pytestmark = pytest.mark.fast


class _NoPortAudio(importlib.abc.MetaPathFinder):
    """Makes ``import sounddevice`` fail as it does when PortAudio's C library is absent."""

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> None:
        if name == "sounddevice":
            raise OSError("PortAudio library not found")


@pytest.fixture
def no_portaudio(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delitem(sys.modules, "sounddevice", raising=False)
    monkeypatch.setattr(sys, "meta_path", [_NoPortAudio(), *sys.meta_path])


def test_a_missing_package_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "sounddevice", None)  # `import sounddevice` raises ImportError
    with pytest.raises(MissingDependencyError, match=r"anima\[audio\]"):
        import_sounddevice("audio", "sound card")
    with pytest.raises(MissingDependencyError, match=r"anima\[audio\]"):
        SoundDeviceSink().start(22050)
    assert not SoundDeviceSink.available()


@pytest.mark.usefixtures("no_portaudio")
def test_a_missing_portaudio_names_the_debian_package() -> None:
    with pytest.raises(
        SpeechError, match=r"^sound card: PortAudio library not found; .*libportaudio2"
    ):
        SoundDeviceSink().start(22050)
    with pytest.raises(SpeechError, match=r"^microphone: .*libportaudio2"):
        MicrophoneSource().start(lambda *_: None)  # type: ignore[arg-type]
    assert not SoundDeviceSink.available()  # so `--audio-out auto` falls back to no sound
