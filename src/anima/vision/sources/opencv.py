"""OpenCV, imported when a source is made (the ``vision`` extra), and what every source does
to a frame before handing it on: scaled to ``vision.width`` (aspect kept), BGR to RGB, and
unmirrored when the source gives mirror images."""

from __future__ import annotations

from types import ModuleType
from typing import Any

import numpy as np

from anima.errors import MissingDependencyError
from anima.native import preload
from anima.vision.types import Image


def load_cv2() -> ModuleType:
    """The ``cv2`` module, or a :class:`MissingDependencyError` naming the ``vision`` extra;
    every part of anima that uses OpenCV loads it here.

    OpenCV's own threads are turned off (``cv2.setNumThreads(0)``: each call runs on its
    caller's thread). Its pool spins between calls; on 2 cores the camera's and the
    detector's calls kept both cores busy, a thread holding the interpreter lock was left
    waiting for one, and the motion loop waited on the lock: with the simulated head camera
    and BlazeFace, 36-63 missed ticks in 6 s and detection 39-50 ms a frame; without the pool,
    0 missed and 7-9 ms (320×240 frames gain nothing from threads). Its library is mapped
    first without the interpreter lock (:func:`anima.native.preload`): imported under it, the
    loop's tick waited 106 ms."""
    preload("cv2", "cv2")
    try:
        import cv2
    except ImportError as exc:
        raise MissingDependencyError("opencv-python-headless", "vision") from exc
    cv2.setNumThreads(0)
    return cv2


def prepare(cv2: Any, image: Any, width: int, *, mirrored: bool) -> Image:
    """``image`` as OpenCV reads it (BGR, BGRA or grey) as the RGB frame a detector takes:
    ``width`` pixels wide, its aspect kept; flipped left to right when ``mirrored``."""
    height, wide = image.shape[:2]
    if wide != width:
        high = max(1, round(height * width / wide))
        # INTER_AREA averages the pixels it drops (no aliasing); it only shrinks well
        how = cv2.INTER_AREA if wide > width else cv2.INTER_LINEAR
        image = cv2.resize(image, (width, high), interpolation=how)
    if image.ndim == 2:
        rgb = cv2.cvtColor(image, cv2.COLOR_GRAY2RGB)
    elif image.shape[2] == 4:
        rgb = cv2.cvtColor(image, cv2.COLOR_BGRA2RGB)
    else:
        rgb = cv2.cvtColor(image, cv2.COLOR_BGR2RGB)
    if mirrored:
        rgb = cv2.flip(rgb, 1)
    return np.ascontiguousarray(rgb, dtype=np.uint8)
