"""PiperEngine: clause splitting, phoneme marks from alignments, cancellation, lazy loading.

The synthesis tests run the real bundled voice offline; they skip only when the ``speech`` extra
(piper-tts) is not installed.
"""

from __future__ import annotations

import sys
from types import SimpleNamespace

import numpy as np
import pytest

from anima.errors import MissingDependencyError, SpeechError
from anima.speech.base import AudioChunk, Cancel, TTSEngine
from anima.speech.piper.piper import PiperEngine, phoneme_marks, split_clauses

pytestmark = pytest.mark.model


@pytest.fixture(scope="module")
def engine(piper: PiperEngine) -> PiperEngine:
    """The speech tests' loaded Piper voice (conftest.py)."""
    return piper


def test_is_a_tts_engine() -> None:
    assert isinstance(PiperEngine(), TTSEngine)


def test_constructor_touches_nothing() -> None:
    PiperEngine(model="/nonexistent/voice.onnx", config="/nonexistent/voice.onnx.json")


def test_config_without_model_is_refused() -> None:
    with pytest.raises(ValueError, match="config given without model"):
        PiperEngine(config="voice.onnx.json")


def test_supports_english_only() -> None:
    engine = PiperEngine()
    assert engine.supports("en-US")
    assert engine.supports("en-GB")
    assert engine.supports("en_US")
    assert not engine.supports("de-DE")
    assert not engine.supports("fr")


@pytest.mark.parametrize(
    ("text", "clauses"),
    [
        ("Hello there. How are you today?", ["Hello there.", "How are you today?"]),
        ("Well, yes.", ["Well, yes."]),
        ("It costs 3.5 euros; fine!", ["It costs 3.5 euros;", "fine!"]),
        (
            "Hello, my name is Nadine, and I am a social robot.",
            ["Hello, my name is Nadine,", "and I am a social robot."],
        ),
        ('She said "no." Then left', ['She said "no."', "Then left"]),
        ("  no punctuation at all  ", ["no punctuation at all"]),
        ("", []),
        ("  ...  ", ["..."]),
    ],
)
def test_split_clauses(text: str, clauses: list[str]) -> None:
    assert split_clauses(text) == clauses


def test_split_clauses_comma_threshold() -> None:
    assert split_clauses("Yes, I do.", min_comma_chars=0) == ["Yes,", "I do."]


def _alignments(*entries: tuple[str, int]) -> list[SimpleNamespace]:
    return [SimpleNamespace(phoneme=p, num_samples=n) for p, n in entries]


def test_phoneme_marks_fold_stress_and_length() -> None:
    # Piper's raw entries for "world", with their sample counts
    raw = _alignments(
        ("^", 100), ("w", 10), ("ˈ", 20), ("ɜ", 30), ("ː", 40), ("l", 50), ("d", 60), ("$", 70)
    )
    marks = phoneme_marks(raw, start=1000)
    assert [(m.phoneme, m.offset) for m in marks] == [
        ("^", 1000),
        ("w", 1100),
        ("ˈɜː", 1110),  # starts at the stress mark, lasts through the length mark
        ("l", 1200),
        ("d", 1250),
        ("$", 1310),
    ]


def test_phoneme_marks_keep_modifiers_with_nothing_to_fold_into() -> None:
    raw = _alignments(("ˌ", 5), (" ", 5), ("ː", 5), ("a", 5), ("ˈ", 5))
    assert [(m.phoneme, m.offset) for m in phoneme_marks(raw)] == [
        ("ˌ", 0),
        (" ", 5),
        ("ː", 10),
        ("a", 15),
        ("ˈ", 20),
    ]


def test_missing_piper_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "piper", None)  # makes `import piper` raise ImportError
    with pytest.raises(MissingDependencyError, match=r"piper-tts.*anima\[speech\]"):
        PiperEngine().load()


def test_missing_voice_file_is_a_speech_error() -> None:
    pytest.importorskip("piper", reason="piper-tts is not installed (pip install 'anima[speech]')")
    with pytest.raises(SpeechError, match="voice file not found"):
        PiperEngine(model="/nonexistent/voice.onnx").load()


def test_synthesizes_clause_by_clause_with_phoneme_marks(engine: PiperEngine) -> None:
    chunks = list(engine.synthesize("Hello there. How are you today?", "en-US", Cancel()))

    assert len(chunks) >= 2  # one per clause
    assert all(c.sample_rate == 22050 for c in chunks)
    assert all(c.samples.dtype == np.int16 and len(c.samples) > 0 for c in chunks)
    total = sum(len(c.samples) for c in chunks)
    assert total > 22050 // 2  # over half a second of speech

    offsets = [m.offset for c in chunks for m in c.phonemes]
    assert len(offsets) > 10
    assert offsets == sorted(offsets)
    assert offsets[0] == 0
    assert offsets[-1] < total
    # the alignments add up exactly: each chunk's marks start where the previous chunk ended
    start = 0
    for chunk in chunks:
        assert chunk.phonemes[0].offset == start
        assert all(start <= m.offset < start + len(chunk.samples) for m in chunk.phonemes)
        start += len(chunk.samples)
    symbols = [m.phoneme for c in chunks for m in c.phonemes]
    assert symbols[:6] == ["^", "h", "ə", "l", "ˈo", "ʊ"]  # "Hello", stress folded
    assert symbols.count("$") == len(chunks)
    assert not {"ˈ", "ˌ", "ː"} & set(symbols)  # no bare modifier reaches the viseme mapper


def test_audio_is_not_silent(engine: PiperEngine) -> None:
    (chunk,) = engine.synthesize("Hello world", "en-US", Cancel())
    assert int(np.abs(chunk.samples.astype(np.int32)).max()) > 1000


def test_cancel_between_clauses_stops_early(engine: PiperEngine) -> None:
    cancel = Cancel()
    got: list[AudioChunk] = []
    for chunk in engine.synthesize("One. Two. Three. Four.", "en-US", cancel):
        got.append(chunk)
        cancel.set()
    assert len(got) == 1


def test_cancelled_before_start_yields_nothing(engine: PiperEngine) -> None:
    cancel = Cancel()
    cancel.set()
    assert list(engine.synthesize("Hello there.", "en-US", cancel)) == []


def test_unsupported_locale_is_a_speech_error(engine: PiperEngine) -> None:
    with pytest.raises(SpeechError, match="de-DE"):
        list(engine.synthesize("Hallo", "de-DE", Cancel()))


def test_sample_rate(engine: PiperEngine) -> None:
    assert engine.sample_rate == 22050
