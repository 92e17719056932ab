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

onnxruntime's graph optimisation of the voice costs ~0.8 s of CPU at every load (1.0–1.1 s for
the session against 0.24 s for the same graph saved optimised, synthesis equally fast): the first
load saves the optimised graph beside the aligned copy and later loads open it with no
optimisation. Its fused kernels fit the CPU they were made on, so its name carries onnxruntime's
version and a digest of the CPU's model and flags; a saved graph that fails to open is removed
and made again.

Each copy is ~63 MB, and one is made per voice file path (each virtual environment has its
own): a copy is touched when it is used, and when a new one is made the copies unused for
:data:`UNUSED_DAYS` days (and writes a crash left behind) are removed.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import platform
import time
from pathlib import Path
from typing import Any

WARM_UP_TEXT = "Hi."  # the first run initialises espeak and onnxruntime: pay it at load
UNUSED_DAYS = 30  # a cached copy not used for this long is removed when another is made


class VoiceFileError(Exception):
    """The aligned copy of the voice model cannot be cached."""


def cache_root() -> Path:
    """anima's cache directory: ``$XDG_CACHE_HOME/anima`` (``~/.cache/anima``)."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "anima"


def cache_dir() -> Path:
    return cache_root() / "piper"


def file_identity(path: Path) -> str:
    """What a cached product of ``path`` is keyed by: its resolved path, size and modification
    time (a new voice file, or the same one replaced, makes new cache entries)."""
    stat = path.stat()
    return f"{path.resolve()}:{stat.st_size}:{stat.st_mtime_ns}"


def aligned_model(model: Path) -> Path:
    """The voice model patched to output alignments, patched once and cached on disk.

    Patching (onnx.load, edit, serialize) holds the GIL for ~100 ms, which would make the
    motion loop miss deadlines (in process); onnxruntime then loads the cached file without
    holding it.
    """
    key = hashlib.sha1(file_identity(model).encode()).hexdigest()
    cached = cache_dir() / f"{model.stem}-{key[:12]}-aligned.onnx"
    if cached.is_file():
        _touch(cached)
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
    prune(cached.parent, keep=cached)
    return cached


def _touch(path: Path) -> None:
    """Mark a cached copy used now (kept by :func:`prune`); a read-only cache is fine."""
    with contextlib.suppress(OSError):
        os.utime(path)


def prune(folder: Path, *, keep: Path, unused_days: float = UNUSED_DAYS) -> list[Path]:
    """Remove the cached voice copies in ``folder`` unused for ``unused_days`` days, and
    temporary files older than a day (a write that crashed), never ``keep``; the paths removed.
    Only this module's copies (``*-aligned*``: a voice model itself is never one); files that
    cannot be removed are left."""
    now = time.time()
    removed: list[Path] = []
    for path in folder.glob("*-aligned*"):
        if path == keep or not path.is_file():
            continue
        try:
            age_days = (now - path.stat().st_mtime) / 86400
            if age_days > unused_days or (".tmp" in path.name and age_days > 1):
                path.unlink()
                removed.append(path)
        except OSError:
            continue
    return removed


def open_voice(model: Path, config: Path | None) -> Any:  # a piper.PiperVoice (untyped)
    """PiperVoice.load, with alignments from the cached model and one onnxruntime thread,
    warmed up. One intra-op thread leaves the other core to the motion loop."""
    from piper.config import PiperConfig
    from piper.voice import PiperVoice

    config_path = config or Path(f"{model}.json")
    with config_path.open(encoding="utf-8") as f:
        voice_config = PiperConfig.from_dict(json.load(f))
    voice = PiperVoice(session=open_session(aligned_model(model)), config=voice_config)
    for _ in voice.synthesize(WARM_UP_TEXT, include_alignments=True):
        pass
    return voice


def open_session(aligned: Path) -> Any:  # an onnxruntime.InferenceSession
    """The aligned voice's session on one thread, from its saved optimised graph when there is
    one; otherwise optimised now and saved (atomically: workers may load side by side)."""
    import onnxruntime

    def session(path: Path, level: Any, save: Path | None = None) -> Any:
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        options.graph_optimization_level = level
        if save is not None:
            options.optimized_model_filepath = str(save)
            options.log_severity_level = 3  # its warning that the file fits this CPU: we know

        return onnxruntime.InferenceSession(
            str(path), sess_options=options, providers=["CPUExecutionProvider"]
        )

    levels = onnxruntime.GraphOptimizationLevel
    optimised = optimised_path(aligned, onnxruntime.__version__)
    if optimised.is_file():
        try:
            opened = session(optimised, levels.ORT_DISABLE_ALL)
        except Exception:  # a damaged or foreign file: made again below
            optimised.unlink(missing_ok=True)
        else:
            _touch(optimised)
            return opened
    tmp = optimised.with_name(f"{optimised.stem}.{os.getpid()}.tmp.onnx")
    try:
        made = session(aligned, levels.ORT_ENABLE_ALL, save=tmp)
        tmp.replace(optimised)
    except Exception:  # saving is an optimisation: load as before
        tmp.unlink(missing_ok=True)
        return session(aligned, levels.ORT_ENABLE_ALL)
    return made


def optimised_path(aligned: Path, ort_version: str) -> Path:
    """Where the optimised graph of ``aligned`` is kept for this onnxruntime and this CPU."""
    key = hashlib.sha1(f"{ort_version}:{platform.machine()}:{_cpu_signature()}".encode())
    return aligned.with_name(f"{aligned.stem}-ort-{key.hexdigest()[:12]}.onnx")


def _cpu_signature() -> str:
    """The CPU's model name and flags (Linux), or what the platform module says of it."""
    try:
        text = Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return platform.processor()
    wanted = ("model name", "flags", "Features", "CPU part")
    lines = {line.split(":", 1)[0].strip(): line for line in text.splitlines() if ":" in line}
    return "|".join(lines.get(name, "") for name in wanted)
