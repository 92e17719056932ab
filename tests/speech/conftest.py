"""Fixtures shared by the speech tests."""

from __future__ import annotations

import pytest

from anima.speech.piper.piper import PiperEngine


@pytest.fixture(scope="module")
def piper() -> PiperEngine:
    """The bundled Piper voice, loaded (skips without the ``speech`` extra)."""
    pytest.importorskip("piper", reason="piper-tts is not installed (pip install 'anima[speech]')")
    engine = PiperEngine()
    engine.load()
    return engine
