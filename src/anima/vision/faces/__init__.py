"""Faces in a frame (``vision.faces``): BlazeFace short-range with the face mesh
(:mod:`~anima.vision.faces.blazeface`, :mod:`~anima.vision.faces.mesh`), or OpenCV's Haar
cascade as a fallback (:mod:`~anima.vision.faces.haar`). Each maker takes the
:class:`~anima.config.vision.VisionConfig` and returns a
:class:`~anima.vision.types.FaceDetector`; nothing heavy is imported until one is made.
The model files and how they are checked: :mod:`~anima.vision.faces.models`.
:func:`make_detector` makes the one ``vision.faces`` names, in a process of its own by default
(:mod:`~anima.vision.faces.process`).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from anima.config.vision import VisionConfig
    from anima.vision.types import FaceDetector

logger = logging.getLogger(__name__)


def make_detector(config: VisionConfig) -> FaceDetector:
    """The detector ``vision.faces`` names, in a process of its own when ``vision.process``
    (:class:`~anima.vision.faces.process.ProcessDetector`), else in this one."""
    if config.process:
        from anima.vision.faces.process import ProcessDetector

        return ProcessDetector(config)
    from anima.config.vision import DETECTORS

    made: FaceDetector = DETECTORS.load(config.faces)(config)
    return made


def make_blazeface(config: VisionConfig) -> FaceDetector:
    """BlazeFace short-range (and the face mesh when ``vision.landmarks``); a ConfigError when
    the model files are missing or not the pinned ones, MissingDependencyError without the
    ``vision`` extra."""
    from anima.vision.faces.blazeface import BlazeFace

    return BlazeFace(config)


def make_haar(config: VisionConfig) -> FaceDetector:
    """OpenCV's Haar frontal cascade: boxes only, ~8× BlazeFace's cost (p50; ~20× at p95)."""
    from anima.vision.faces.haar import Haar

    return Haar(config)


def make_auto(config: VisionConfig) -> FaceDetector:
    """BlazeFace when its models and runtime are here, else Haar with one warning saying what
    is missing."""
    from anima.vision.faces.models import missing

    lacking = missing()
    if lacking is None:
        return make_blazeface(config)
    logger.warning("vision.faces: auto uses the Haar cascade (boxes only): %s", lacking)
    return make_haar(config)


__all__ = ["make_auto", "make_blazeface", "make_detector", "make_haar"]
