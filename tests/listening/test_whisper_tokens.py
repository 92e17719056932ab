"""anima's Whisper tokenizer (GPT-2's byte-level BPE from ``vocabulary.txt``) gives the ids and
text the ``tokenizers`` package gives from ``tokenizer.json``, loads without holding the
interpreter, and refuses a file that is not Whisper's vocabulary."""

from __future__ import annotations

import random
import sys
import threading
import time
from pathlib import Path

import pytest

from anima.listening.whisper.model import bundled_model
from anima.listening.whisper.tokens import WhisperTokens

pytestmark = pytest.mark.fast

tokenizers = pytest.importorskip("tokenizers", reason="the reference: pip install tokenizers")

TEXTS = [
    "hey robot, nod your head please",
    "What's the weather like?",
    "I'll say it's 2024 — isn't it?",
    "  multiple   spaces\nand\ttabs  ",
    "naïve café résumé",
    "東京 漢字 emoji 😀 ok",
    "snake_case_name __init__",
    "don't won't she'd we've they're I'm",
    "$100.50 & 50% off #tag @user",
    "'quoted' \"double\"",
    "Anima, look at me.",
    "",
    " ",
    "hello\n\nworld  ",
]


@pytest.fixture(scope="module")
def model_dir() -> Path:
    try:
        return bundled_model()
    except Exception as exc:
        pytest.skip(f"no Whisper model: {exc}")


@pytest.fixture(scope="module")
def tokens(model_dir: Path) -> WhisperTokens:
    return WhisperTokens.from_model(model_dir)


@pytest.fixture(scope="module")
def reference(model_dir: Path) -> object:
    return tokenizers.Tokenizer.from_file(str(model_dir / "tokenizer.json"))


def _texts() -> list[str]:
    rng = random.Random(7)
    alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 ,.!?'-_\n\té€😀ß東"
    made = ["".join(rng.choice(alphabet) for _ in range(rng.randint(1, 40))) for _ in range(400)]
    return TEXTS + made


def test_ids_and_text_agree_with_the_tokenizers_package(
    tokens: WhisperTokens, reference: object
) -> None:
    ref = reference
    for text in _texts():
        ids = tokens.encode(text)
        assert ids == ref.encode(text, add_special_tokens=False).ids, text  # type: ignore[attr-defined]
        assert tokens.decode(ids) == ref.decode(ids) == text, text  # type: ignore[attr-defined]
    spread = list(range(0, len(tokens), 7))  # every kind of token, the special ones left out
    assert tokens.decode(spread) == ref.decode(spread)  # type: ignore[attr-defined]
    for special in (
        "<|endoftext|>",
        "<|startoftranscript|>",
        "<|notimestamps|>",
        "<|startofprev|>",
    ):
        assert tokens.token_to_id(special) == ref.token_to_id(special)  # type: ignore[attr-defined]
    assert tokens.id_to_token(tokens.encode(" Anima")[0]) == ref.id_to_token(  # type: ignore[attr-defined]
        tokens.encode(" Anima")[0]
    )
    assert tokens.token_to_id("<|no such token|>") is None
    assert tokens.id_to_token(len(tokens)) is None
    assert tokens.id_to_token(-1) is None


@pytest.mark.serial  # a bound on a sleeping thread's wake-ups: alone, on a quiet machine
def test_loading_never_holds_the_interpreter_long(model_dir: Path) -> None:
    """The tokenizers package held it 120-150 ms (a dozen ticks of the motion loop)."""
    previous = sys.getswitchinterval()
    sys.setswitchinterval(0.001)  # as the runtime sets it (motion/priority.py)
    gaps: list[float] = []
    ticking, done = threading.Event(), threading.Event()

    def ticker() -> None:  # the wake-ups of a thread sleeping 1 ms: real time is the subject
        last = time.monotonic()
        while not done.is_set():
            time.sleep(0.001)
            now = time.monotonic()
            gaps.append(now - last)
            last = now
            ticking.set()

    thread = threading.Thread(target=ticker)
    thread.start()
    try:
        assert ticking.wait(5.0)
        gaps.clear()
        WhisperTokens.from_model(model_dir)
    finally:
        done.set()
        thread.join()
        sys.setswitchinterval(previous)
    assert gaps
    assert max(gaps) < 0.05  # a few ms of C calls at a time, not the whole load


def test_a_file_that_is_not_a_whisper_vocabulary_is_refused(tmp_path: Path) -> None:
    (tmp_path / "vocabulary.txt").write_text("a\nb\nc\n", encoding="utf-8")
    with pytest.raises(ValueError, match="not a Whisper vocabulary"):
        WhisperTokens.from_model(tmp_path)
    with pytest.raises(FileNotFoundError):
        WhisperTokens.from_model(tmp_path / "missing")
