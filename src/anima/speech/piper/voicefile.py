"""Opening a Piper voice file with alignments, importing nothing of anima.

Both the runtime process (:mod:`anima.speech.piper.voice`, ``speech.piper_process: false``) and
the voice's own worker process (:mod:`anima.speech.piper.worker`, which loads this file by its
path so as not to import the ``anima`` package: ~200 ms and ~10 MB of config modules) open the
voice here, so both load it the same way: the model patched for alignments and cached on disk,
onnxruntime on one thread, warmed up with one short synthesis.

Lips need Piper's per-symbol alignments, which the stock voice model does not output: the model
is patched once (``onnx``) and the patched copy cached under ``$XDG_CACHE_HOME/anima/piper``,
keyed by the model's path, size and modification time. Failures are plain exceptions
(:class:`VoiceFileError` when the cache cannot be written); callers turn them into their errors.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

WARM_UP_TEXT = "Hi."  # the first run initialises espeak and onnxruntime: pay it at load


class VoiceFileError(Exception):
    """The aligned copy of the voice model cannot be cached."""


def cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "anima" / "piper"


def aligned_model(model: Path) -> Path:
    """The voice model patched to output alignments, patched once and cached on disk.

    Patching (onnx.load, edit, serialize) holds the GIL for ~100 ms, which would make the
    motion loop miss deadlines (in process); onnxruntime then loads the cached file without
    holding it.
    """
    stat = model.stat()
    key = hashlib.sha1(f"{model.resolve()}:{stat.st_size}:{stat.st_mtime_ns}".encode()).hexdigest()
    cached = cache_dir() / f"{model.stem}-{key[:12]}-aligned.onnx"
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
        raise VoiceFileError(
            f"piper: cannot cache the aligned voice in {cached.parent}: {exc}"
        ) from exc
    return cached


def open_voice(model: Path, config: Path | None) -> Any:  # a piper.PiperVoice (untyped)
    """PiperVoice.load, with alignments from the cached model and one onnxruntime thread,
    warmed up. One intra-op thread leaves the other core to the motion loop."""
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
        str(aligned_model(model)), sess_options=options, providers=["CPUExecutionProvider"]
    )
    voice = PiperVoice(session=session, config=voice_config)
    for _ in voice.synthesize(WARM_UP_TEXT, include_alignments=True):
        pass
    return voice
