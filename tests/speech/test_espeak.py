"""EspeakEngine: real eSpeak NG speech, phoneme marks, voices, cancel, determinism, threads.

The synthesis tests run the real ``libespeak-ng.so.1`` (installed by ``scripts/bootstrap.sh``
from ``scripts/apt-packages.txt``); they skip only when that library is absent.
"""

from __future__ import annotations

import subprocess
import sys
import threading
from collections.abc import Iterable

import numpy as np
import pytest

from anima.errors import ConfigError, SpeechError
from anima.speech.base import AudioChunk, Cancel, TTSEngine
from anima.speech.espeak import espeak
from anima.speech.espeak.espeak import PAUSE, EspeakEngine, phoneme_marks, split_sentences

pytestmark = pytest.mark.integration

RATE = 22050
VOWELS = {"ə", "oʊ", "ɜː"}  # what eSpeak's en-us voice says in "hello world"
CONSONANTS = {"h", "l", "w", "d"}


@pytest.fixture(scope="module")
def engine() -> EspeakEngine:
    engine = EspeakEngine()
    try:
        engine.load()
    except SpeechError as exc:
        pytest.skip(
            f"eSpeak NG's C library is not installed (apt-get install libespeak-ng1): {exc}"
        )
    return engine


def speak(engine: EspeakEngine, text: str, locale: str = "en-US") -> list[AudioChunk]:
    return list(engine.synthesize(text, locale, Cancel()))


def audio(chunks: Iterable[AudioChunk]) -> np.ndarray:
    parts = [c.samples for c in chunks]
    return np.concatenate(parts) if parts else np.zeros(0, dtype=np.int16)


def phonemes(chunks: Iterable[AudioChunk]) -> list[str]:
    return [m.phoneme for c in chunks for m in c.phonemes]


def check_marks(chunks: list[AudioChunk]) -> None:
    """Offsets strictly increase, lie inside the audio, and each inside its own chunk."""
    start, last = 0, -1
    for chunk in chunks:
        for mark in chunk.phonemes:
            assert start <= mark.offset < start + len(chunk.samples)
            assert mark.offset > last
            last = mark.offset
        start += len(chunk.samples)


# ---------------------------------------------------------------- without the library


def test_is_a_tts_engine() -> None:
    assert isinstance(EspeakEngine(), TTSEngine)


def test_constructor_touches_nothing() -> None:
    code = (
        "from anima.speech.espeak.espeak import EspeakEngine\n"
        "EspeakEngine(wpm=200, pitch=40)\n"
        "assert 'libespeak' not in open('/proc/self/maps').read()\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


@pytest.mark.parametrize("kwargs", [{"wpm": 79}, {"wpm": 451}, {"pitch": -1}, {"pitch": 101}])
def test_bad_rate_or_pitch_is_refused(kwargs: dict[str, int]) -> None:
    with pytest.raises(ConfigError):
        EspeakEngine(**kwargs)


def test_missing_library_says_how_to_install() -> None:
    with pytest.raises(SpeechError, match="apt-get install libespeak-ng1"):
        espeak._Library("libespeak-ng-missing.so.1")


@pytest.mark.parametrize(
    ("text", "sentences"),
    [
        ("Hello there. How are you? Fine!", ["Hello there.", "How are you?", "Fine!"]),
        ("It costs 3.5 euros, fine", ["It costs 3.5 euros, fine"]),
        ('She said "no." Then left…', ['She said "no."', "Then left…"]),
        ("Dr. Smith", ["Dr.", "Smith"]),  # as eSpeak itself does: a sentence break
        ("", []),
        (" ... !? ", []),
    ],
)
def test_split_sentences(text: str, sentences: list[str]) -> None:
    assert split_sentences(text) == sentences


def test_phoneme_marks_fold_pauses_and_keep_offsets_increasing() -> None:
    events = [(10, ""), (20, "h"), (30, ""), (40, ""), (50, ""), (50, "w"), (60, "d"), (60, "")]
    marks = phoneme_marks([*events, (99, "x"), (100, "")], start=1000, length=100)
    assert [(m.phoneme, m.offset) for m in marks] == [
        (PAUSE, 1010), ("h", 1020), (PAUSE, 1030), ("w", 1050), ("d", 1060), ("x", 1099)
    ]  # fmt: skip


# ---------------------------------------------------------------- with the library


def test_hello_world_is_audible_and_long_enough(engine: EspeakEngine) -> None:
    chunks = speak(engine, "Hello world")
    samples = audio(chunks)
    assert {c.sample_rate for c in chunks} == {RATE} == {engine.sample_rate}
    assert all(c.samples.dtype == np.int16 for c in chunks)
    assert len(samples) >= 0.5 * RATE
    assert np.abs(samples).max() > 3000
    assert np.sqrt(np.mean(samples.astype(np.float64) ** 2)) > 300
    assert all(len(c.samples) == round(RATE * espeak.CHUNK_SECONDS) for c in chunks[:-1])


def test_hello_world_marks(engine: EspeakEngine) -> None:
    chunks = speak(engine, "Hello world")
    check_marks(chunks)
    names = phonemes(chunks)
    assert set(names) >= CONSONANTS
    assert VOWELS & set(names)
    assert names.index("h") < names.index("w") < names.index("d")
    assert not any("ˈ" in n or "ˌ" in n for n in names)  # eSpeak's names carry no stress


@pytest.mark.parametrize(
    ("locale", "text", "expected"),
    [
        ("de-DE", "Guten Morgen, wie geht es dir?", {"ɡ", "uː", "m", "v", "iː"}),
        ("fr-FR", "Bonjour tout le monde.", {"b", "ɔ̃", "ʒ", "ʁ"}),
        ("en-GB", "Hello world", {"h", "əʊ", "w"}),
        ("es-ES", "Hola, ¿cómo estás?", {"o", "l", "a", "k"}),
    ],
)
def test_other_voices(engine: EspeakEngine, locale: str, text: str, expected: set[str]) -> None:
    assert engine.supports(locale)
    chunks = speak(engine, text, locale)
    check_marks(chunks)
    assert len(audio(chunks)) > 0.5 * RATE
    assert expected <= set(phonemes(chunks))


def test_voice_for_locales(engine: EspeakEngine) -> None:
    assert engine.voice_for("en-US") == "en-us"
    assert engine.voice_for("en_us") == "en-us"
    assert engine.voice_for("en-GB") == "en"
    assert engine.voice_for("de-DE") == "de"
    assert engine.voice_for("de-AT") == "de"  # from the language part
    assert engine.voice_for("fr-FR") == "fr"
    assert engine.voice_for("pt-BR") == "pt-br"
    assert engine.voice_for("it") == "it"


@pytest.mark.parametrize("locale", ["xx-YY", "", "tlh"])
def test_unsupported_locale(engine: EspeakEngine, locale: str) -> None:
    assert not engine.supports(locale)
    with pytest.raises(SpeechError, match="no voice"):
        speak(engine, "Hello", locale)


@pytest.mark.parametrize("text", ["", "   \n ", "..."])
def test_empty_text_yields_nothing(engine: EspeakEngine, text: str) -> None:
    assert speak(engine, text) == []


def test_cancel_from_the_consumer_stops_after_the_chunk(engine: EspeakEngine) -> None:
    text = "This sentence is long enough for many chunks. And here is a second one."
    full = len(speak(engine, text))
    cancel = Cancel()
    got = []
    for chunk in engine.synthesize(text, "en-US", cancel):
        got.append(chunk)
        cancel.set()
    assert len(got) == 1 < full


class CancelAfterReads(Cancel):
    """A cancel flag that sets itself on its n-th read: lands inside eSpeak's synth callback."""

    def __init__(self, reads: int) -> None:
        super().__init__()
        self.reads = 0
        self._limit = reads

    @property
    def is_set(self) -> bool:
        self.reads += 1
        if self.reads >= self._limit:
            self.set()
        return super().is_set


def test_cancel_aborts_espeak_mid_sentence_and_the_engine_recovers(engine: EspeakEngine) -> None:
    text = "One very long sentence " + "that goes on and on " * 20 + "until it ends."
    reference = audio(speak(engine, "Hello world"))
    uncancelled = CancelAfterReads(10**9)
    assert len(list(engine.synthesize(text, "en-US", uncancelled))) > 50
    cancel = CancelAfterReads(5)  # one read per 20 ms callback: ~100 ms into the audio
    assert list(engine.synthesize(text, "en-US", cancel)) == []
    assert cancel.reads < 10 < uncancelled.reads / 10  # eSpeak stopped at once
    assert np.array_equal(audio(speak(engine, "Hello world")), reference)


def test_same_text_same_samples(engine: EspeakEngine) -> None:
    first = speak(engine, "Hello world. How are you?")
    speak(engine, "Something else entirely, to move eSpeak's state.")
    speak(engine, "Etwas ganz anderes.", "de-DE")
    second = speak(engine, "Hello world. How are you?")
    assert np.array_equal(audio(first), audio(second))
    assert [c.phonemes for c in first] == [c.phonemes for c in second]


def test_rate_changes_the_duration() -> None:
    slow, fast = EspeakEngine(wpm=100), EspeakEngine(wpm=300)
    try:
        slow.load()
    except SpeechError as exc:
        pytest.skip(str(exc))
    text = "The rate is given in words per minute."
    assert len(audio(speak(slow, text))) > 2 * len(audio(speak(fast, text)))


def test_two_threads_at_once(engine: EspeakEngine) -> None:
    texts = {"en-US": "The first thread speaks English.", "de-DE": "Der zweite spricht Deutsch."}
    expected = {loc: audio(speak(engine, text, loc)) for loc, text in texts.items()}
    results: dict[str, list[np.ndarray]] = {loc: [] for loc in texts}
    errors: list[BaseException] = []

    def work(locale: str) -> None:
        try:
            for _ in range(5):
                results[locale].append(audio(speak(engine, texts[locale], locale)))
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(loc,)) for loc in texts]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    assert not errors
    for locale, runs in results.items():
        assert len(runs) == 5
        assert all(np.array_equal(run, expected[locale]) for run in runs)


def test_long_text(engine: EspeakEngine) -> None:
    sentence = "This is sentence number {}, and it has a few more words in it."
    text = " ".join(sentence.format(i) for i in range(40))
    chunks = speak(engine, text)
    check_marks(chunks)
    assert len(audio(chunks)) > 40 * 2 * RATE  # 40 sentences of well over 2 s each
    assert phonemes(chunks).count(PAUSE) >= 40


def test_library_shared_with_other_code_still_works(engine: EspeakEngine) -> None:
    """Another holder keeps the library loaded: no reset (a warning), and above all no deadlock."""
    code = (
        "import ctypes\n"
        "from anima.speech.base import Cancel\n"
        "from anima.speech.espeak.espeak import EspeakEngine\n"
        "engine = EspeakEngine()\n"
        "engine.load()\n"
        "other = ctypes.CDLL('libespeak-ng.so.1')\n"
        "for _ in range(3):\n"
        "    assert list(engine.synthesize('Hello. World.', 'en-US', Cancel()))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    assert "also loaded by other code" in done.stderr
