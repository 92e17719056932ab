"""Frames with faces where we put them: scikit-image's public-domain astronaut (Eileen Collins,
a frontal face) scaled, turned in the image plane, lit and composited onto backgrounds, with the
true box of every face. The faces benchmark and tests/vision/test_vision_faces.py use them.

Which images tune and which only measure: the tests (and the mesh's yaw gain) were set on
``astronaut``, ``camera``, ``coffee`` and ``chelsea`` as whole images and on 320×240 frames with
plain grey backgrounds. The benchmark's detection set (:func:`measured_set`) puts faces on crops
of ``rocket``, ``hubble_deep_field``, ``brick``, ``grass``, ``coffee`` and ``chelsea`` at random
sizes, places, rolls and brightness, and adds ``lfw_subset``'s 100 faces and 100 non-faces
(Labeled Faces in the Wild, 25×25 grey crops): none of those frames was looked at while choosing
a threshold.
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from anima.vision.types import Box, Image

WIDTH, HEIGHT = 320, 240
# the astronaut's face in her 512×512 image (pixels: BlazeFace's box, rounded)
FACE = (178, 81, 272, 175)
SPRITE = (110, 10, 340, 250)  # head, hair and shoulders around it (x0, y0, x1, y1)


@dataclass(frozen=True)
class Placed:
    """Where a face was put: its box in the frame (normalised) and its roll (degrees)."""

    box: Box
    roll_deg: float = 0.0


@dataclass(frozen=True, eq=False)
class Scene:
    """One frame and the faces in it."""

    name: str
    image: Image
    faces: tuple[Placed, ...]


def _cv2() -> Any:  # OpenCV (the vision extra)
    from anima.vision.faces.models import opencv

    return opencv()


def skimage_data() -> Any:
    """scikit-image's ``data`` module (untyped; the test extra)."""
    return importlib.import_module("skimage.data")


def astronaut() -> Image:
    image: Image = skimage_data().astronaut()
    return image


def grey(value: int = 128) -> Image:
    return np.full((HEIGHT, WIDTH, 3), value, dtype=np.uint8)


def background(image: Image, rng: np.random.Generator) -> Image:
    """A random 320×240 crop of ``image`` (grey images made RGB), scaled up when smaller."""
    cv2 = _cv2()
    if image.ndim == 2:
        image = np.dstack([image] * 3)
    h, w = image.shape[:2]
    scale = max(WIDTH / w, HEIGHT / h, rng.uniform(0.5, 1.0))
    image = cv2.resize(image, (max(WIDTH, round(w * scale)), max(HEIGHT, round(h * scale))))
    h, w = image.shape[:2]
    y, x = int(rng.integers(0, h - HEIGHT + 1)), int(rng.integers(0, w - WIDTH + 1))
    crop: Image = np.ascontiguousarray(image[y : y + HEIGHT, x : x + WIDTH])
    return crop


def paste(
    frame: Image,
    source: Image,
    face: tuple[float, float, float, float],
    *,
    centre: tuple[float, float],
    size: float,
    roll_deg: float = 0.0,
    gain: float = 1.0,
) -> Placed:
    """Paste ``source`` into ``frame`` (in place) so that its face (``face``: x0, y0, x1, y1 in
    ``source`` pixels) is ``size`` pixels high, centred on ``centre`` (frame pixels), turned
    ``roll_deg`` in the image plane (counter-clockwise) and lit ``gain`` times; the edge of the
    pasted patch fades out in an ellipse so it draws no hard rectangle. The face's true box."""
    cv2 = _cv2()
    fx0, fy0, fx1, fy1 = face
    k = size / (fy1 - fy0)
    fc = ((fx0 + fx1) / 2, (fy0 + fy1) / 2)
    affine = cv2.getRotationMatrix2D(fc, roll_deg, k)
    affine[:, 2] += np.array(centre) - np.array(fc)
    height, width = frame.shape[:2]
    warped = cv2.warpAffine(source, affine, (width, height), flags=cv2.INTER_AREA)
    h, w = source.shape[:2]
    mask = np.zeros((h, w), dtype=np.float32)
    cv2.ellipse(mask, (w // 2, h // 2), (w // 2 - 2, h // 2 - 2), 0, 0, 360, 1.0, -1)
    mask = cv2.GaussianBlur(mask, (0, 0), max(2.0, min(h, w) / 20))
    alpha = cv2.warpAffine(mask, affine, (width, height), flags=cv2.INTER_LINEAR)[..., None]
    lit = np.clip(warped.astype(np.float32) * gain, 0, 255)
    frame[:] = (frame * (1 - alpha) + lit * alpha).astype(np.uint8)
    half_w, half_h = (fx1 - fx0) * k / 2, size / 2
    cx, cy = centre
    return Placed(
        Box(
            max(0.0, (cx - half_w) / width),
            max(0.0, (cy - half_h) / height),
            min(1.0, (cx + half_w) / width),
            min(1.0, (cy + half_h) / height),
        ),
        roll_deg,
    )


def with_astronauts(
    frame: Image,
    placements: Sequence[tuple[float, float, float]],
    *,
    name: str = "",
    roll_deg: float = 0.0,
    gain: float = 1.0,
) -> Scene:
    """``frame`` with the astronaut's head pasted at each ``(x, y, face height)`` (pixels);
    the frame is copied."""
    frame = frame.copy()
    x0, y0, x1, y1 = SPRITE
    sprite = np.ascontiguousarray(astronaut()[y0:y1, x0:x1])
    face = (FACE[0] - x0, FACE[1] - y0, FACE[2] - x0, FACE[3] - y0)
    placed = tuple(
        paste(frame, sprite, face, centre=(x, y), size=size, roll_deg=roll_deg, gain=gain)
        for x, y, size in placements
    )
    return Scene(name, frame, placed)


def lfw(count: int = 100) -> list[Scene]:
    """Labeled Faces in the Wild through scikit-image's ``lfw_subset``: its first ``count`` faces
    (25×25 grey, tight on the face) and as many of its non-faces (patches of the same photos'
    backgrounds), each scaled to 100 px and pasted into a grey 320×240 frame at its centre."""
    cv2 = _cv2()
    crops: NDArray[np.float64] = skimage_data().lfw_subset()
    scenes = []
    for i, crop in enumerate([*crops[:count], *crops[100 : 100 + count]]):
        frame = grey()
        patch = cv2.resize((crop * 255).astype(np.uint8), (100, 100), interpolation=cv2.INTER_CUBIC)
        y, x = (HEIGHT - 100) // 2, (WIDTH - 100) // 2
        frame[y : y + 100, x : x + 100] = patch[..., None]
        box = Box(x / WIDTH, y / HEIGHT, (x + 100) / WIDTH, (y + 100) / HEIGHT)
        face = i < count
        placed = (Placed(box),) if face else ()
        scenes.append(Scene("lfw face" if face else "lfw none", frame, placed))
    return scenes


def measured_set(frames: int = 60, *, faces: int = 100, seed: int = 32) -> list[Scene]:
    """The benchmark's detection set: ``frames`` 320×240 frames, a third each with no face, one
    and two, on crops of backgrounds never used in the tests' tuning, the faces 40–110 px high,
    rolled up to ±20°, lit 0.6–1.3×; then :func:`lfw`'s ``faces`` faces and non-faces. Fixed by
    ``seed``."""
    data = skimage_data()
    rng = np.random.default_rng(seed)
    sources = [data.rocket(), data.hubble_deep_field(), data.brick(), data.grass()]
    sources += [data.coffee(), data.chelsea()]
    scenes: list[Scene] = []
    for i in range(frames):
        frame = background(sources[i % len(sources)], rng)
        people = i % 3
        placements = []
        for p in range(people):
            size = float(rng.uniform(40, 110))
            lo = size * 0.7 + (p * WIDTH / 2 if people == 2 else 0)
            hi = (WIDTH / 2 if people == 2 else WIDTH) + (p * WIDTH / 2) - size * 0.7
            x = float(rng.uniform(lo, max(lo + 1, hi)))
            y = float(rng.uniform(size * 0.7, HEIGHT - size * 0.7))
            placements.append((x, y, size))
        roll = float(rng.uniform(-20, 20))
        gain = float(rng.uniform(0.6, 1.3))
        scenes.append(
            with_astronauts(frame, placements, name=f"{people} face", roll_deg=roll, gain=gain)
        )
    return scenes + lfw(faces)
