"""The audio sink and source registries (issue 15): a name a config gives is checked when it
loads, naming the choices; each registered maker imports and makes its part."""

from __future__ import annotations

from pathlib import Path

import pytest

from anima.config import AgentConfig, SpeechConfig
from anima.config.speech_parts import SINKS
from anima.errors import ConfigError
from anima.listening.makers import make_source
from anima.listening.registry import SOURCES
from anima.listening.sources import PushSource, WavSource
from anima.registry import Registry
from anima.speech.sinks import NullSink, WavSink, choose_sink

pytestmark = pytest.mark.fast


@pytest.mark.parametrize("typo", ["nul", "sound-device", "out.mp3"])
def test_a_sink_name_that_is_no_sink_is_refused_when_the_config_loads(typo: str) -> None:
    """A typo used to become a WAV file of that name, written wherever the robot ran."""
    with pytest.raises(
        ConfigError, match=r"speech\.audio_out must be one of auto, null, sounddevice"
    ):
        SpeechConfig(audio_out=typo)


def test_each_sink_name_makes_its_sink(tmp_path: Path) -> None:
    assert set(SINKS.names) == {"auto", "null", "sounddevice"}
    assert isinstance(choose_sink("null"), NullSink)
    wav = choose_sink(str(tmp_path / "speech.WAV"))
    assert isinstance(wav, WavSink)
    assert choose_sink(None).name in ("null", "sounddevice")  # auto: no sound card here → null


@pytest.mark.parametrize("typo", ["microphone", "stdin.txt", ""])
def test_a_source_name_that_is_no_source_is_refused_when_the_config_loads(typo: str) -> None:
    with pytest.raises(ConfigError, match=r"agent\.audio_in must be one of auto, none, mic"):
        AgentConfig(audio_in=typo)


def test_each_source_name_makes_its_source(tmp_path: Path) -> None:
    assert set(SOURCES.names) == {"auto", "none", "mic", "stdin", "push"}
    assert make_source("none") is None
    assert isinstance(make_source("push"), PushSource)
    assert isinstance(make_source(str(tmp_path / "request.wav")), WavSource)
    with pytest.raises(ConfigError, match=r"agent\.audio_in"):
        make_source("nothing")


def _registries() -> list[Registry]:
    from anima.agent.planners import PLANNERS
    from anima.config.speech_parts import ENGINES
    from anima.config.vision import SOURCES as CAMERAS
    from anima.drivers.registry import DRIVERS
    from anima.frontdoors.registry import DOORS
    from anima.humanoid.registry import HUMANOIDS
    from anima.listening.registry import RECOGNIZERS, SOURCES, SPOTTERS, TURNS, VADS

    return [
        DRIVERS, ENGINES, SINKS, SOURCES, VADS, SPOTTERS, RECOGNIZERS, TURNS, PLANNERS, DOORS,
        HUMANOIDS, CAMERAS,
    ]  # fmt: skip


def test_the_humanoid_types_are_the_humanoid_registry_and_none() -> None:
    from anima.choices import HumanoidType
    from anima.humanoid.registry import HUMANOIDS

    assert set(HUMANOIDS.names) == {t.value for t in HumanoidType} - {"none"}


@pytest.mark.parametrize("registry", _registries(), ids=lambda r: r.key)
def test_every_registered_name_resolves_to_its_maker(registry: Registry) -> None:
    """A maker's "module:attr" names a callable that exists (importing the module only: the
    makers import their engines when called)."""
    for name in registry.names:
        assert callable(registry.load(name)), name
    with pytest.raises(ConfigError, match=rf"^{registry.key} must be one of .*got 'nope'$"):
        registry.check("nope")


def test_each_front_door_is_a_config_section_that_turns_it_on() -> None:
    from anima.config import AnimaConfig
    from anima.frontdoors.registry import DOORS

    config = AnimaConfig()
    assert DOORS.names == ("mqtt", "web")  # the order build() opens them in
    for name in DOORS.names:
        assert isinstance(getattr(config, name).enabled, bool)
