"""``anima bench asr`` on a small set: every figure is filled and printed."""

from __future__ import annotations

import pytest

from anima.bench.asr.asr import mix, report_lines, run_asr_bench, speech_rms, word_errors

pytestmark = pytest.mark.model

pytest.importorskip("ctranslate2", reason="needs the listen extra")


def test_word_errors_count_substitutions_deletions_and_insertions() -> None:
    assert word_errors("walk forward for two seconds", "Walk forward for 2 seconds.") == (0, 5)
    assert word_errors("give me a nod", "give me an ad") == (2, 4)
    assert word_errors("stop", "stop stop") == (1, 1)
    assert word_errors("look at me", "") == (3, 3)


def test_noise_is_mixed_at_the_level_asked() -> None:
    import numpy as np

    rng = np.random.default_rng(0)
    speech = (np.sin(np.arange(16000) / 5) * 8000).astype(np.int16)
    mixed = mix(speech, rng.standard_normal(32000), -20.0, lead_s=0.5)
    noise = mixed[:8000].astype(np.float64)  # the lead: noise alone
    ratio_db = 20 * np.log10(np.sqrt(np.mean(noise**2)) / speech_rms(speech))
    assert abs(ratio_db + 20.0) < 0.5


def test_a_small_run_fills_every_figure(monkeypatch: pytest.MonkeyPatch) -> None:
    """The smallest run that has every figure: one voice (eSpeak's: the bench's ``voices()``
    would load Piper too, ~1.3 s of CPU, for nothing), one request, one latency utterance
    (~1.3 s, not the bench's three of ~3 s: the partial decodes of the real-time trial and the
    decode figure's ones were ~6 s of this test's ~26 s of CPU)."""
    from anima.bench.asr import asr as bench
    from anima.speech.espeak.espeak import EspeakEngine

    def espeak_only() -> list[bench.Voice]:
        engine = EspeakEngine()
        engine.load()
        return [bench.Voice("espeak-en-us", engine, "en-US")]

    monkeypatch.setattr(bench, "voices", espeak_only)
    monkeypatch.setattr(bench, "LONG_REQUESTS", ("could you wave at me",))
    r = run_asr_bench(
        recognizers=("whisper",), requests=("look at me",),
        voice_names=("espeak-en-us",), latency_trials=1, tail_s=0.2, max_s=120.0,
    )  # fmt: skip
    assert set(r.wer) == {"whisper"}
    for by_voice in r.wer.values():
        assert {c for cells in by_voice.values() for c in cells} == {"clean", "white", "babble"}
    assert all(len(v) == 1 for v in r.latency_ms.values())
    assert 0 <= r.reused["whisper"] <= 1
    assert len(r.decode_ms) == 1  # one decode of each latency utterance
    assert r.load_s["whisper"] > 0
    assert r.confidence_right or r.confidence_wrong
    assert len(r.confidence_noise) == 8
    lines = report_lines(r)
    assert any(line.strip().startswith("whisper") and "clean" in line for line in lines)
    assert any("final after the end of turn" in line for line in lines)
