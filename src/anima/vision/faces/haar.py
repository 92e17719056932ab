"""OpenCV's Haar frontal-face cascade: boxes only, the fallback when BlazeFace cannot run.

About 22 ms a 320×240 frame on one core, 63 ms at p95 (BlazeFace: 2.7 ms), upright frontal
faces only, no key points and no landmarks. The cascade file ships inside
opencv-python-headless 4.x (``cv2.data.haarcascades``; OpenCV 5 wheels dropped it). Its
``score`` is not a probability: it is ``n / (n + 5)`` for the ``n`` overlapping windows that
voted for the box (at least :data:`NEIGHBOURS`, so at least 0.5), which orders faces surest
first.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from anima.config.vision import VisionConfig
from anima.errors import ConfigError, EngineStateError
from anima.vision.faces.blazeface import check_image
from anima.vision.faces.models import opencv
from anima.vision.types import Box, Face, Image

CASCADE = "haarcascade_frontalface_default.xml"
SCALE_STEP = 1.1  # each pyramid level is this much smaller
NEIGHBOURS = 5  # windows that must agree on a face (OpenCV's usual choice)
MIN_FACE = 0.08  # faces smaller than this share of the frame's short side are not looked for


class Haar:
    """:class:`~anima.vision.types.FaceDetector` with OpenCV's Haar frontal cascade."""

    name = "haar"

    def __init__(self, config: VisionConfig | None = None) -> None:
        self._cv2 = opencv()
        path = Path(self._cv2.data.haarcascades) / CASCADE
        cascade = self._cv2.CascadeClassifier(str(path))
        if cascade.empty():
            raise ConfigError(
                f"vision.faces: haar needs OpenCV's {CASCADE} (opencv-python-headless<5), not "
                f"found at {path}",
                key="vision.faces",
            )
        self._cascade: Any = cascade

    def detect(self, image: Image) -> list[Face]:
        """The upright frontal faces in ``image``, surest first (boxes only)."""
        if self._cascade is None:
            raise EngineStateError("the face detector was closed")
        image = check_image(image)
        height, width = image.shape[:2]
        gray = self._cv2.cvtColor(image, self._cv2.COLOR_RGB2GRAY)
        side = max(8, round(MIN_FACE * min(width, height)))
        found, votes = self._cascade.detectMultiScale2(
            gray, scaleFactor=SCALE_STEP, minNeighbors=NEIGHBOURS, minSize=(side, side)
        )
        faces = [
            Face(
                box=Box(x / width, y / height, (x + w) / width, (y + h) / height),
                score=round(float(n) / (float(n) + NEIGHBOURS), 4),
            )
            for (x, y, w, h), n in zip(
                np.asarray(found).reshape(-1, 4).tolist(), votes, strict=True
            )
        ]
        return sorted(faces, key=lambda face: -face.score)

    def close(self) -> None:
        self._cascade = None
