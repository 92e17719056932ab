"""BlazeFace short-range: faces within about 2 m, ~2.7 ms a 320×240 frame on one core.

The steps are MediaPipe's face_detection_short_range graph, written out in numpy:
the frame is letterboxed to 128×128 (its aspect kept, black bars, values in [-1, 1]); the
model scores 896 SSD anchors (:func:`ssd_anchors`, as MediaPipe's SsdAnchorsCalculator makes
them) and regresses, for each, a box and six key points as offsets from the anchor in input
pixels; scores pass a sigmoid; boxes overlapping a surer one by more than 0.3 IoU are merged
into it, weighted by score (MediaPipe's WEIGHTED non-maximum suppression); the letterbox is
undone so coordinates are the frame's own, normalised. When ``vision.landmarks`` is on, each
face is read by the face mesh (:mod:`anima.vision.faces.mesh`). With ``vision.detect_every``
n > 1 (2 by default), the detector runs on the first frame and every n-th, and the mesh alone
follows the faces it found on the frames between, as MediaPipe's face-mesh graph tracks between
detections (:meth:`~anima.vision.faces.mesh.FaceMesh.follow`): one model a frame instead of two
(each costs about the same), the mesh's readings on the frames it follows; a face the mesh loses
sends the frame to the detector at once. With n = 1 every frame is detected and every face read.

The short-range model misses faces smaller than about a tenth of the frame's long side (at
320×240 the astronaut's face was found 40 px high, missed 30 px high) and is less sure of a
profile: see docs/attention.md for what was measured.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from anima.config.vision import VisionConfig
from anima.errors import EngineStateError, InvalidCommandError
from anima.vision.faces.mesh import FaceMesh
from anima.vision.faces.models import DETECTOR, interpreter, model_file, opencv
from anima.vision.types import Box, Face, Image

logger = logging.getLogger(__name__)

Floats = NDArray[np.float32]

SIZE = 128  # the model's input, square (pixels)
KEYPOINTS = 6  # right eye, left eye, nose tip, mouth centre, right ear, left ear
NMS_IOU = 0.3  # MediaPipe's min_suppression_threshold for this graph
RAW_SCORE_CLIP = 80.0  # logits clipped before the sigmoid (MediaPipe: 100, float32 overflows)


def ssd_anchors(
    size: int = SIZE, strides: tuple[int, ...] = (8, 16, 16, 16), per_layer: int = 2
) -> Floats:
    """Anchor centres (n × 2, normalised x, y) as MediaPipe's SsdAnchorsCalculator makes them
    for face_detection_short_range: layers of equal stride share one feature map, each layer
    adding ``per_layer`` anchors per cell (aspect ratio 1 and the interpolated scale), the
    anchors fixed in size (1 × 1), centred in their cells. 128 px: 16×16×2 + 8×8×6 = 896."""
    centres: list[Floats] = []
    layer = 0
    while layer < len(strides):
        last = layer
        while last < len(strides) and strides[last] == strides[layer]:
            last += 1
        cells = size // strides[layer]
        grid = (np.arange(cells, dtype=np.float32) + 0.5) / cells
        xs, ys = np.meshgrid(grid, grid)  # row-major: y outer, x inner, as MediaPipe
        cell = np.stack([xs.ravel(), ys.ravel()], axis=1)
        centres.append(np.repeat(cell, per_layer * (last - layer), axis=0))
        layer = last
    return np.concatenate(centres).astype(np.float32)


def sigmoid(logits: Floats) -> Floats:
    clipped = np.clip(logits, -RAW_SCORE_CLIP, RAW_SCORE_CLIP)
    return (1.0 / (1.0 + np.exp(-clipped))).astype(np.float32)


def decode(raw: Floats, anchors: Floats, size: int = SIZE) -> tuple[Floats, Floats]:
    """Boxes (n × 4: x0, y0, x1, y1) and key points (n × 6 × 2), normalised to the model's input,
    from its regressors (n × 16: centre x, y, width, height, then six x, y, in input pixels
    relative to the anchor's centre)."""
    values = raw.reshape(len(anchors), -1, 2) / size
    centre = values[:, 0] + anchors
    half = values[:, 1] / 2
    boxes = np.concatenate([centre - half, centre + half], axis=1)
    points = values[:, 2 : 2 + KEYPOINTS] + anchors[:, None, :]
    return boxes.astype(np.float32), points.astype(np.float32)


def iou(box: Floats, boxes: Floats) -> Floats:
    """IoU of one box (4) with each of ``boxes`` (n × 4)."""
    w = np.minimum(box[2], boxes[:, 2]) - np.maximum(box[0], boxes[:, 0])
    h = np.minimum(box[3], boxes[:, 3]) - np.maximum(box[1], boxes[:, 1])
    inter = np.clip(w, 0, None) * np.clip(h, 0, None)
    areas = (boxes[:, 2] - boxes[:, 0]) * (boxes[:, 3] - boxes[:, 1])
    union = (box[2] - box[0]) * (box[3] - box[1]) + areas - inter
    return np.where(union > 0, inter / np.where(union > 0, union, 1), 0).astype(np.float32)


def weighted_nms(
    boxes: Floats, points: Floats, scores: Floats, threshold: float = NMS_IOU
) -> list[tuple[Floats, Floats, float]]:
    """MediaPipe's WEIGHTED non-maximum suppression: the surest box and every box overlapping it
    by more than ``threshold`` IoU are merged into one (their coordinates averaged, weighted by
    score; the surest score kept); repeat on what is left. Surest first."""
    order = np.argsort(-scores, kind="stable")
    boxes, points, scores = boxes[order], points[order], scores[order]
    left = np.ones(len(scores), dtype=bool)
    merged: list[tuple[Floats, Floats, float]] = []
    for i in range(len(scores)):
        if not left[i]:
            continue
        group = left & (iou(boxes[i], boxes) > threshold)
        group[i] = True
        weights = scores[group] / scores[group].sum()
        box = (boxes[group] * weights[:, None]).sum(axis=0)
        kps = (points[group] * weights[:, None, None]).sum(axis=0)
        merged.append((box.astype(np.float32), kps.astype(np.float32), float(scores[i])))
        left &= ~group
    return merged


def check_image(image: Any) -> Image:
    """``image`` if it is an RGB frame (height × width × 3, uint8), else InvalidCommandError;
    made contiguous (a mirrored view ``image[:, ::-1]`` is copied: OpenCV needs positive steps)."""
    if not isinstance(image, np.ndarray) or image.dtype != np.uint8:
        raise InvalidCommandError(
            f"a face detector takes an RGB image as a uint8 numpy array, got "
            f"{getattr(image, 'dtype', type(image).__name__)}"
        )
    if image.ndim != 3 or image.shape[2] != 3 or image.shape[0] < 2 or image.shape[1] < 2:
        raise InvalidCommandError(
            f"a face detector takes an RGB image (height × width × 3), got shape {image.shape}"
        )
    contiguous: Image = np.ascontiguousarray(image)
    return contiguous


class BlazeFace:
    """:class:`~anima.vision.types.FaceDetector` with MediaPipe's BlazeFace short-range, and its
    face mesh when ``vision.landmarks`` is on. One thread at a time (the vision thread)."""

    name = "blazeface"

    def __init__(self, config: VisionConfig, *, directory: Path | None = None) -> None:
        """``directory`` holds the ``.tflite`` files (default: the installed package's); each is
        checked against its pinned hash before it is loaded."""
        self._cv2 = opencv()
        self._min_score = config.min_face_score
        self._model: Any = interpreter(model_file(DETECTOR, directory))
        (inp,) = self._model.get_input_details()
        self._input = inp["index"]
        outputs = {int(d["shape"][-1]): d["index"] for d in self._model.get_output_details()}
        self._boxes, self._scores = outputs[4 + 2 * KEYPOINTS], outputs[1]
        self._anchors = ssd_anchors()
        self._mesh = FaceMesh(directory) if config.landmarks else None
        self._detect_every = config.detect_every if self._mesh is not None else 1
        self._frames = 0  # frames seen: the detector runs on every ``detect_every``-th
        # the faces of the frame before, each with its unclipped box: what the mesh follows
        self._last: list[tuple[Face, Floats]] = []
        # reused letterbox: black bars (-1 after scaling) around the scaled frame
        self._tensor = np.empty((1, SIZE, SIZE, 3), dtype=np.float32)

    def detect(self, image: Image) -> list[Face]:
        """The faces in ``image`` at least ``vision.min_face_score`` sure, surest first: found
        by the detector on every ``vision.detect_every``-th frame (and whenever the mesh lost a
        face), followed by the mesh from the frame before on the others."""
        if self._model is None:
            raise EngineStateError("the face detector was closed")
        image = check_image(image)
        turn = self._frames % self._detect_every
        self._frames += 1
        if turn and self._last and self._mesh is not None:
            followed = [self._mesh.follow(image, face, corners) for face, corners in self._last]
            if all(f is not None for f in followed):
                self._last = [f for f in followed if f is not None]
                return [face for face, _ in self._last]
        found = self._find(image, self._mesh if self._detect_every == 1 else None)
        self._last = found
        return [face for face, _ in found]

    def _find(self, image: Image, mesh: FaceMesh | None) -> list[tuple[Face, Floats]]:
        """The detector's faces in ``image`` (read by ``mesh`` when given), each with its
        unclipped box."""
        height, width = image.shape[:2]
        scale = SIZE / max(width, height)
        rw, rh = max(1, round(width * scale)), max(1, round(height * scale))
        ox, oy = (SIZE - rw) // 2, (SIZE - rh) // 2
        # INTER_AREA: a 320×240 frame shrinks 2.5×; bilinear would alias its fine detail
        scaled = self._cv2.resize(image, (rw, rh), interpolation=self._cv2.INTER_AREA)
        self._tensor.fill(-1.0)
        self._tensor[0, oy : oy + rh, ox : ox + rw] = scaled * np.float32(2 / 255) - 1
        self._model.set_tensor(self._input, self._tensor)
        self._model.invoke()
        raw = self._model.get_tensor(self._boxes)[0]
        scores = sigmoid(self._model.get_tensor(self._scores)[0, :, 0])
        keep = scores >= self._min_score
        if not keep.any():
            return []
        boxes, points = decode(raw[keep], self._anchors[keep])
        # undo the letterbox: input pixels → the frame's normalised coordinates
        offset = np.array([ox, oy], dtype=np.float32)
        extent = np.array([rw, rh], dtype=np.float32)
        faces: list[tuple[Face, Floats]] = []
        for box, kps, score in weighted_nms(boxes, points, scores[keep]):
            corners = (box.reshape(2, 2) * SIZE - offset) / extent  # unclipped, for the mesh
            x0, y0, x1, y1 = np.clip(corners, 0, 1).ravel().tolist()
            if x1 <= x0 or y1 <= y0:
                continue
            keypoints = (kps * SIZE - offset) / extent
            face = Face(
                box=Box(x0, y0, x1, y1),
                score=score,
                keypoints=tuple((float(x), float(y)) for x, y in keypoints),
            )
            if mesh is not None:
                face = mesh.read(image, face, corners)
            faces.append((face, corners))
        return faces

    def close(self) -> None:
        self._model = None
        if self._mesh is not None:
            self._mesh.close()
