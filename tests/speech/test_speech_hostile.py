"""Hostile text for the TTS engines (issue 12 item 5): huge clauses, huge words, too much text.

An engine must bound its own work for any text it is given: no single phonemizer or synthesis
call may hold the interpreter long enough to starve the 100 Hz motion loop, memory must not grow
with the text, and text over :data:`~anima.speech.base.MAX_TEXT_CHARS` is refused with a clear
error before any work. The real voices run; no timing is asserted tighter than 100 ms.
"""

from __future__ import annotations

import itertools
import tracemalloc
import xml.etree.ElementTree as ET

import pytest
from hypothesis import given
from hypothesis import strategies as st

from anima.bench.speech.speech import GilProbe
from anima.errors import SpeechError
from anima.speech.azure.azure import AzureEngine
from anima.speech.azure.sdk import AudioData, EventCallback, Finished
from anima.speech.azure.wire import AzureCredentials
from anima.speech.base import AudioChunk, Cancel, TTSEngine
from anima.speech.espeak.espeak import EspeakEngine
from anima.speech.piper.piper import MAX_PHONEMES, PiperEngine
from anima.speech.text import MAX_TEXT_CHARS, PIECE_WEIGHT, SYMBOL_WEIGHT, cut_long, weight

pytestmark = pytest.mark.model

WORDS = ("the", "robot", "looks", "at", "you", "and", "waves", "its", "hand", "while", "speaking")
# one 20,000-character clause: no punctuation at all, as a runaway LLM reply can be
CLAUSE_20K = " ".join(itertools.islice(itertools.cycle(WORDS), 5000))[:20_000]


@pytest.fixture(scope="module")
def espeak() -> EspeakEngine:
    engine = EspeakEngine()
    try:
        engine.load()
    except SpeechError as exc:  # CI installs libespeak-ng1 through the bootstrap
        pytest.skip(f"eSpeak NG is not available here: {exc}")
    return engine


# ---------------------------------------------------------------- cutting text into pieces


@given(st.text(alphabet=st.sampled_from("ab ,;:.\n😀©"), max_size=400), st.integers(16, 60))
def test_pieces_are_bounded_and_lose_nothing(text: str, limit: int) -> None:
    pieces = cut_long(text, limit)
    assert all(0 < weight(p) <= limit for p in pieces)
    assert "".join("".join(pieces).split()) == "".join(text.split())


def test_a_symbol_weighs_more_than_a_letter() -> None:
    """espeak-ng spells an emoji's name: 160 of them in one piece held the GIL ~90 ms."""
    assert weight("abc") == 3
    assert weight("a😀") == 1 + SYMBOL_WEIGHT
    assert max(len(p) for p in cut_long("😀" * 2000)) == PIECE_WEIGHT // SYMBOL_WEIGHT


@given(st.lists(st.text(alphabet="abc", min_size=1, max_size=20), max_size=40))
def test_words_are_cut_only_when_longer_than_a_piece(words: list[str]) -> None:
    pieces = cut_long(" ".join(words), 20)
    assert [w for p in pieces for w in p.split()] == words


def test_a_clause_is_cut_at_its_commas_first() -> None:
    text = "first part of it, " * 3 + "and " + "then more words " * 8
    pieces = cut_long(text.strip(), 60)
    assert pieces[0] == "first part of it, first part of it, first part of it,"
    assert all(len(p) <= 60 for p in pieces)


def test_text_that_fits_is_untouched() -> None:
    assert cut_long("  Hello, there.  ") == ["Hello, there."]
    assert cut_long("   ") == []


@pytest.mark.parametrize("engine_name", ["piper", "espeak"])
@pytest.mark.parametrize(
    "text",
    ["hello \ud800 world", "hel\x00lo there", "bell\x07 and escape\x1b[2J here"],
    ids=["lone surrogate", "NUL", "control characters"],
)
def test_unspeakable_characters_are_spoken_around(
    engine_name: str, text: str, request: pytest.FixtureRequest
) -> None:
    """They raised UnicodeEncodeError (eSpeak) or "embedded null character" (Piper)."""
    engine = request.getfixturevalue(engine_name)
    chunks = list(engine.synthesize(text, "en-US", Cancel()))
    assert sum(len(c.samples) for c in chunks) > 0.3 * chunks[0].sample_rate


class _SsmlRecorder:
    """An Azure synthesizer that records each SSML document and answers with 10 ms of audio."""

    def __init__(self, _credentials: AzureCredentials, _sample_rate: int) -> None:
        self.ssml: list[str] = []

    def speak(self, ssml: str, on_event: EventCallback) -> None:
        self.ssml.append(ssml)
        on_event(AudioData(bytes(480)))
        on_event(Finished())

    def stop(self) -> None: ...

    def close(self) -> None: ...


def test_azure_ssml_stays_valid_xml_with_control_characters_in_the_text() -> None:
    made: list[_SsmlRecorder] = []

    def factory(credentials: AzureCredentials, rate: int) -> _SsmlRecorder:
        made.append(_SsmlRecorder(credentials, rate))
        return made[-1]

    environ = {"AZURE_SERVICE_KEY": "k", "AZURE_SERVICE_REGION": "westeurope"}
    tts = AzureEngine(environ=environ, env_file=None, synthesizer_factory=factory)
    list(tts.synthesize("bell\x07 nul\x00 \ud800 end", "en-US", Cancel()))
    (ssml,) = made[0].ssml
    ET.fromstring(ssml)  # a parse error before: XML 1.0 has no such characters
    assert "bell  nul    end" in ssml


def test_piper_text_cannot_switch_to_raw_phonemes(piper: PiperEngine) -> None:
    assert list(piper.pieces("say [[ h ə l oʊ ]] now")) == ["say [ [ h ə l oʊ ]] now"]


# ---------------------------------------------------------------- too much text: refused at once


@pytest.mark.parametrize(
    "engine",
    [
        PiperEngine(model="/nonexistent/voice.onnx"),  # refused before it would load anything
        EspeakEngine(),
        AzureEngine(environ={}, env_file=None),  # refused before it would look for a key
    ],
    ids=["piper", "espeak", "azure"],
)
def test_text_over_the_limit_is_refused_before_any_work(engine: TTSEngine) -> None:
    text = "a" * (MAX_TEXT_CHARS + 1)
    with pytest.raises(SpeechError, match=r"too long to speak: 20,001 characters, at most 20,000"):
        next(iter(engine.synthesize(text, "en-US", Cancel())))


def test_a_megabyte_is_refused_with_a_short_message() -> None:
    with pytest.raises(SpeechError) as info:
        next(iter(EspeakEngine().synthesize("word " * 200_000, "en-US", Cancel())))
    assert "1,000,000 characters" in str(info.value)
    assert len(str(info.value)) < 200  # quotes the start, never the text


# ---------------------------------------------------------------- Piper: one huge clause


def _first(engine: PiperEngine | EspeakEngine, text: str, n: int) -> list[AudioChunk]:
    return list(itertools.islice(engine.synthesize(text, "en-US", Cancel()), n))


@pytest.mark.serial  # a wall-clock bound on the GIL
def test_piper_never_holds_the_interpreter_for_a_whole_huge_clause(piper: PiperEngine) -> None:
    """Phonemizing the 20,000 characters in one call held the GIL 110–230 ms."""
    with GilProbe() as probe:
        chunks = _first(piper, CLAUSE_20K, 2)
    assert len(chunks) == 2
    assert probe.worst_ms < 100  # ~10 ms now: one ≤160-character piece at a time


def test_piper_pieces_are_short_and_marks_run_on_across_them(piper: PiperEngine) -> None:
    assert all(len(p) <= PIECE_WEIGHT for p in piper.pieces(CLAUSE_20K))
    chunks = _first(piper, CLAUSE_20K, 3)
    start = 0
    for chunk in chunks:  # each piece's marks start where the previous piece's audio ended
        assert chunk.phonemes[0].offset == start
        assert all(start <= m.offset < start + len(chunk.samples) for m in chunk.phonemes)
        start += len(chunk.samples)
    assert start < 30 * 22050  # three pieces, not the 20-minute clause


# ---------------------------------------------------------------- eSpeak: one huge sentence


def test_espeak_first_audio_of_a_huge_sentence_needs_one_piece_of_memory(
    espeak: EspeakEngine,
) -> None:
    """One espeak_Synth call on the 20,000 characters collected ~48 MB of audio before the
    first chunk was yielded (2.2 s to first audio)."""
    tracemalloc.start()
    try:
        chunks = _first(espeak, CLAUSE_20K, 1)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(chunks) == 1
    assert peak < 5_000_000  # one piece's audio (~0.5 MB), not the sentence's


def test_espeak_marks_run_on_across_pieces(espeak: EspeakEngine) -> None:
    text = CLAUSE_20K[:1000] + ". And a last sentence."
    pieces = list(espeak.pieces(text))
    assert len(pieces) > 6
    assert all(len(p) <= PIECE_WEIGHT for p, _ in pieces)
    assert [pause for _, pause in pieces].count(True) == 1  # after the first sentence only
    chunks = list(espeak.synthesize(text, "en-US", Cancel()))
    offsets = [m.offset for c in chunks for m in c.phonemes]
    assert offsets == sorted(set(offsets))  # strictly increasing over the whole utterance
    assert offsets[-1] < sum(len(c.samples) for c in chunks)


def test_piper_cuts_text_that_expands_into_too_many_phonemes(piper: PiperEngine) -> None:
    """160 Chinese characters (read as "Chinese letter" in English) made one call of 1,650
    phonemes: 1.9 GB and a 0.7 s stall of every other thread."""
    chunks = list(piper.synthesize("漢字" * 20, "en-US", Cancel()))  # ~410 phonemes
    assert len(chunks) >= 2
    assert all(len(c.phonemes) <= MAX_PHONEMES + 2 for c in chunks)  # + the two silences
