"""The 468-point face mesh: which way a face is turned, and whether its mouth is open.

As MediaPipe's face_landmark graph does, the face's box is made square on its long side, grown
1.5×, turned upright by the line between the eyes (the detector's first two key points) and
cropped to 192×192 (values in [0, 1]); the model gives 468 points (x, y in crop pixels, z a
depth on the same scale, smaller is nearer) and a face-presence logit.

Both readings are taken in the upright crop, so a tilted head (roll) does not change them:

- ``yaw_deg``: the face's left-right axis in 3D, from the mesh's depth. For pairs of points
  mirrored across the face (the cheek edges, the temples, the eyes' outer corners, the jaw) the
  sum of their x and z differences gives the axis; its angle out of the image plane is how far
  the mesh thinks the face is turned, positive when it is turned to the image's left (the
  person's right side then lies deeper). The mesh is a near-rigid 3D face (every pair gives
  the same angle to 2°) whose turn saturates: it reads scikit-image's ``camera()``, a near
  profile, as 37–42° (by the box it is given), and the frontal ``astronaut()`` as 1°.
  :data:`YAW_GAIN` (2, set from those two images, the only ones it was set on) scales it so that
  a frontal face reads ~0 and a profile ~±75–85; the result is clipped to ±90. Between the two
  it is a linear guess: no image with a known turn was at hand to check it.
- ``mouth_open``: the gap between the inner lips' middles over the face's height (forehead top
  to chin), 0 when closed; ~0.1 is an open mouth.
"""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from anima.errors import EngineStateError
from anima.vision.faces.models import MESH, interpreter, model_file, opencv
from anima.vision.types import Box, Face, Image

Floats = NDArray[np.float32]

SIZE = 192  # the model's input, square (pixels)
POINTS = 468
GROW = 1.5  # MediaPipe's RectTransformation scale for a detection's box
PRESENCE = 0.5  # the mesh's own "a face is in the crop" below this: no reading
# mesh indices: (the person's right, the person's left), mirrored across the face
MIRRORED = ((234, 454), (127, 356), (33, 263), (93, 323), (132, 361), (58, 288))
UPPER_LIP, LOWER_LIP = 13, 14  # the inner lips' middles
FOREHEAD, CHIN = 10, 152
YAW_GAIN = 2.0  # the mesh's own turn → degrees: camera()'s near profile 37° → 75° (see above)
# the detector's box from the mesh's points' extent (w × h): its centre moved by (dx·w, dy·h),
# its size (sx·w, sy·h). Fitted on 64 frames of the astronaut's face (the gaze bench's 30 and 34
# more at other sizes and places): BlazeFace's box is centred as the points' extent across, 3.3 %
# of its height lower, 1.05× as wide and 0.945× as high. On the faces bench's measured set (159
# faces, never fitted on) the box so made is off the detector's by 1.9 % (x) and 2.8 % (y) of
# its size at p50, 6.0 % and 8.0 % at p95: for a face 50 px high in a 320 px frame 65° wide,
# 0.2-0.3° at p50 and 0.5-0.8° at p95
BOX_FROM_MESH = (0.0, 0.033, 1.05, 0.945)
# BlazeFace's six key points from the mesh's: the eyes (the person's right, left: their
# corners' middle), the nose tip, the mouth's centre (the inner lips), the ears (the tragions)
KEYPOINTS = ((33, 133), (263, 362), (1,), (13, 14), (234,), (454,))


def face_yaw(points: Floats) -> float:
    """Degrees the face is turned from the camera (positive: to the image's left), from the mesh's
    points (468 × 3) in an upright crop."""
    right = points[[r for r, _ in MIRRORED]]
    left = points[[lft for _, lft in MIRRORED]]
    dx = float((left[:, 0] - right[:, 0]).sum())
    dz = float((right[:, 2] - left[:, 2]).sum())
    return max(-90.0, min(90.0, YAW_GAIN * math.degrees(math.atan2(dz, dx))))


def mouth_gap(points: Floats) -> float:
    """The inner lips' gap over the face's height (0: closed)."""
    height = float(np.linalg.norm(points[CHIN, :2] - points[FOREHEAD, :2]))
    gap = float(np.linalg.norm(points[LOWER_LIP, :2] - points[UPPER_LIP, :2]))
    return gap / height if height > 0 else 0.0


class FaceMesh:
    """The face mesh model, read for one detected face at a time."""

    def __init__(self, directory: Path | None = None) -> None:
        self._cv2 = opencv()
        self._model: Any = interpreter(model_file(MESH, directory))
        (inp,) = self._model.get_input_details()
        self._input = inp["index"]
        outputs = {int(np.prod(d["shape"])): d["index"] for d in self._model.get_output_details()}
        self._points, self._presence = outputs[POINTS * 3], outputs[1]

    def crop(self, image: Image, corners: Floats, eyes: Floats) -> tuple[Floats, Floats]:
        """The 192×192 upright crop of the face (float32, [0, 1]) and the 2 × 3 affine map from
        crop pixels to image pixels. ``corners`` is the box (2 × 2, normalised, unclipped),
        ``eyes`` the right and left eyes (2 × 2, normalised)."""
        height, width = image.shape[:2]
        extent = np.array([width, height], dtype=np.float32)
        box = corners * extent
        centre = box.mean(axis=0) - 0.5  # pixel centres are integers for OpenCV
        side = float(max(box[1] - box[0])) * GROW
        (rx, ry), (lx, ly) = eyes * extent
        angle = math.atan2(ly - ry, lx - rx)  # the eye line's slope: the crop turns with it
        k = side / SIZE
        cos, sin = k * math.cos(angle), k * math.sin(angle)
        mid = (SIZE - 1) / 2
        affine = np.array(
            [
                [cos, -sin, centre[0] - (cos - sin) * mid],
                [sin, cos, centre[1] - (sin + cos) * mid],
            ],
            dtype=np.float32,
        )
        cv2 = self._cv2
        flags = cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP
        crop = cv2.warpAffine(image, affine, (SIZE, SIZE), flags=flags, borderValue=(0, 0, 0))
        return crop.astype(np.float32) * np.float32(1 / 255), affine

    def points(self, image: Image, corners: Floats, eyes: Floats) -> tuple[Floats, float]:
        """The mesh's 468 points (x, y in image pixels, z in crop pixels) and the face-presence
        probability; the points in the upright crop are :meth:`upright`'s."""
        upright, presence, affine = self.upright(image, corners, eyes)
        xy = upright[:, :2] @ affine[:, :2].T + affine[:, 2]
        return np.concatenate([xy, upright[:, 2:]], axis=1).astype(np.float32), presence

    def upright(self, image: Image, corners: Floats, eyes: Floats) -> tuple[Floats, float, Floats]:
        """The mesh's points in the upright crop (468 × 3, crop pixels), the face-presence
        probability and the crop's affine map to image pixels."""
        if self._model is None:
            raise EngineStateError("the face mesh was closed")
        crop, affine = self.crop(image, corners, eyes)
        self._model.set_tensor(self._input, crop[None])
        self._model.invoke()
        upright = self._model.get_tensor(self._points).reshape(POINTS, 3).astype(np.float32)
        upright[:, :2] -= 0.5  # the model's pixel edges → OpenCV's pixel centres
        logit = float(np.clip(self._model.get_tensor(self._presence).ravel()[0], -80, 80))
        return upright, 1.0 / (1.0 + math.exp(-logit)), affine

    def read(self, image: Image, face: Face, corners: Floats) -> Face:
        """``face`` with ``yaw_deg`` and ``mouth_open`` filled in from the mesh (left empty when
        the mesh does not see a face in the crop)."""
        eyes = np.array(face.keypoints[:2], dtype=np.float32)
        upright, presence, _ = self.upright(image, corners, eyes)
        if presence < PRESENCE:
            return face
        return dataclasses.replace(
            face, yaw_deg=round(face_yaw(upright), 2), mouth_open=round(mouth_gap(upright), 4)
        )

    def follow(self, image: Image, face: Face, corners: Floats) -> tuple[Face, Floats] | None:
        """``face`` (found in the frame before, ``corners`` its unclipped box) followed into
        ``image`` by the mesh alone, as MediaPipe's face-mesh graph tracks between detections:
        the face as the detector would have given it (its box from the mesh's points, by
        :data:`BOX_FROM_MESH`; its key points the mesh's own; ``yaw_deg`` and ``mouth_open``
        read) and its unclipped box for the next frame; None when the mesh does not see a face
        in the crop any more (the detector must look again)."""
        eyes = np.array(face.keypoints[:2], dtype=np.float32)
        upright, presence, affine = self.upright(image, corners, eyes)
        if presence < PRESENCE:
            return None
        height, width = image.shape[:2]
        xy = (upright[:, :2] @ affine[:, :2].T + affine[:, 2] + 0.5) / np.array(
            [width, height], dtype=np.float32
        )  # OpenCV's pixel centres → normalised
        low, high = xy.min(axis=0), xy.max(axis=0)
        size = high - low
        dx, dy, sx, sy = BOX_FROM_MESH
        centre = (low + high) / 2 + np.array([dx, dy], dtype=np.float32) * size
        half = np.array([sx, sy], dtype=np.float32) * size / 2
        box = np.stack([centre - half, centre + half]).astype(np.float32)
        x0, y0, x1, y1 = np.clip(box, 0, 1).ravel().tolist()
        if x1 <= x0 or y1 <= y0:
            return None
        points = tuple(
            (float(x), float(y)) for x, y in (xy[list(group)].mean(axis=0) for group in KEYPOINTS)
        )
        followed = dataclasses.replace(
            face,
            box=Box(x0, y0, x1, y1),
            keypoints=points,
            yaw_deg=round(face_yaw(upright), 2),
            mouth_open=round(mouth_gap(upright), 4),
        )
        return followed, box

    def close(self) -> None:
        self._model = None
