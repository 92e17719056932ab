"""The speech parts' names live with the config: loading a config imports no engine."""

from __future__ import annotations

import subprocess
import sys

import pytest

from anima.config import SpeechConfig
from anima.config.speech_parts import ENGINES, SINKS
from anima.errors import ConfigError
from anima.speech import ENGINES as SPEECH_ENGINES

pytestmark = pytest.mark.fast


def test_importing_the_config_imports_neither_speech_nor_numpy() -> None:
    code = (
        "import sys, anima.config\n"
        "loaded = sorted(m for m in sys.modules if m.split('.')[0] in "
        "('numpy', 'piper', 'onnxruntime', 'azure') or m.startswith('anima.speech'))\n"
        "assert not loaded, loaded\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_the_speech_package_exports_the_same_registry() -> None:
    assert SPEECH_ENGINES is ENGINES
    assert set(ENGINES.names) == {"piper", "espeak", "azure"}
    assert set(SINKS.names) == {"auto", "null", "sounddevice"}


def test_an_unknown_engine_is_refused_when_the_config_is_made() -> None:
    with pytest.raises(ConfigError, match=r"speech\.engines"):
        SpeechConfig(engines=("pipr",))
