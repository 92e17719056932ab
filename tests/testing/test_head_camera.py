"""The simulated head camera: each face lands where a pinhole at the head's pose puts it, at the
size its distance gives; nothing out of view is drawn; frames come at the fps on the runtime
clock, stamped with their capture time, and a latency delays their delivery, not their stamp.

Faces are measured in the image itself: over a plain green background, a face is the box of
pixels that are not green.
"""

from __future__ import annotations

import math
import threading

import numpy as np
import pytest

from anima.attention.pose_history import PoseHistory
from anima.config.vision import SOURCES, VisionConfig
from anima.errors import ConfigError
from anima.testing import FakeClock, make_engine
from anima.testing.head_camera import SimHeadCamera, make_sim_camera, pose_of
from anima.testing.pinhole import PoseAt
from anima.testing.sim_scene import CROP_FACE_WIDTHS, FACE_WIDTH_M, Scene
from anima.vision.types import Camera, Image, VideoFrame

pytestmark = pytest.mark.fast

GREEN = (0, 255, 0)
W, H = 320, 240
HFOV = 65.0
F = (W / 2) / math.tan(math.radians(HFOV) / 2)  # the focal length in pixels
REAL_BOUND_S = 10.0  # only a hang reaches it


def _config(**kw: object) -> VisionConfig:
    base: dict[str, object] = {
        "source": "sim",
        "width": W,
        "hfov_deg": HFOV,
        "position_m": (0.0, 0.0, 0.0),  # the lens at the head's centre: no parallax
        "fps": 15.0,
    }
    base.update(kw)
    return VisionConfig(**base)  # type: ignore[arg-type]


def _camera(
    scene: Scene, pose: PoseAt | None = None, clock: FakeClock | None = None, **kw: object
) -> SimHeadCamera:
    latency = float(kw.pop("latency_s", 0.0))  # type: ignore[arg-type]
    return make_sim_camera(
        _config(**kw), clock or FakeClock(), scene=scene, pose_at=pose, latency_s=latency
    )


def _drawn(image: Image) -> tuple[float, float, float] | None:
    """The centre (x, y) and width of the pixels that are not the background, in pixels."""
    ys, xs = np.nonzero((image != np.array(GREEN, np.uint8)).any(axis=2))
    if xs.size == 0:
        return None
    x0, x1, y0, y1 = xs.min(), xs.max() + 1, ys.min(), ys.max() + 1
    return (x0 + x1) / 2, (y0 + y1) / 2, float(x1 - x0)


def _one(azimuth: float, elevation: float = 0.0, distance: float = 1.0) -> Scene:
    scene = Scene(background=GREEN)
    scene.add("ann", azimuth, elevation, distance)
    return scene


@pytest.mark.parametrize(
    ("head_yaw_deg", "azimuth_deg"),
    [(0, 0), (0, 20), (0, -20), (15, 0), (-20, -5), (30, 30), (10, 25)],
)
def test_a_face_lands_where_the_pinhole_puts_it_for_the_head_yaw(
    head_yaw_deg: float, azimuth_deg: float
) -> None:
    camera = _camera(_one(azimuth_deg), lambda _t: (math.radians(head_yaw_deg), 0.0))
    drawn = _drawn(camera.capture(0.0).image)
    assert drawn is not None
    x, y, _ = drawn
    # left of the head's heading is left in the image: x = w/2 - f·tan(azimuth - yaw)
    assert x == pytest.approx(W / 2 - F * math.tan(math.radians(azimuth_deg - head_yaw_deg)), abs=1)
    assert y == pytest.approx(H / 2, abs=1)
    (seen,) = camera.seen(0)
    assert seen.center[0] * W == pytest.approx(x, abs=1)


@pytest.mark.parametrize(
    ("head_pitch_deg", "elevation_deg"), [(0, 10), (10, 0), (-8, 5), (12, -10)]
)
def test_a_face_lands_where_the_pinhole_puts_it_for_the_head_pitch(
    head_pitch_deg: float, elevation_deg: float
) -> None:
    camera = _camera(_one(0.0, elevation_deg), lambda _t: (0.0, math.radians(head_pitch_deg)))
    drawn = _drawn(camera.capture(0.0).image)
    assert drawn is not None
    x, y, _ = drawn
    # pitch > 0 tilts the head down: what is level then shows above the image's centre
    assert y == pytest.approx(
        H / 2 - F * math.tan(math.radians(elevation_deg + head_pitch_deg)), abs=1
    )
    assert x == pytest.approx(W / 2, abs=1)


@pytest.mark.parametrize("distance", [0.6, 1.0, 2.0])
def test_a_face_is_scaled_by_its_distance(distance: float) -> None:
    drawn = _drawn(_camera(_one(0.0, 0.0, distance)).capture(0.0).image)
    assert drawn is not None
    assert drawn[2] == pytest.approx(F * FACE_WIDTH_M * CROP_FACE_WIDTHS / distance, abs=2)


def test_the_lens_off_the_head_centre_sees_parallax_and_its_own_yaw() -> None:
    # 10 cm to the left of the head's centre: a face straight ahead at 1 m is right of centre
    left = _camera(_one(0.0), position_m=(0.0, 0.1, 0.0)).capture(0.0).image
    drawn = _drawn(left)
    assert drawn is not None
    assert drawn[0] == pytest.approx(W / 2 + F * 0.1, abs=1)
    # a lens yawed 20° left on the head sees what the head turned 20° left would
    yawed = _camera(_one(5.0), rpy_deg=(0.0, 0.0, 20.0)).capture(0.0).image
    turned = _camera(_one(5.0), lambda _t: (math.radians(20), 0.0)).capture(0.0).image
    assert _drawn(yawed) == _drawn(turned)
    assert _drawn(yawed) is not None


def test_a_fixed_camera_does_not_turn_with_the_head() -> None:
    still = _camera(_one(10.0), mount="fixed").capture(0.0)
    turning = _camera(_one(10.0), lambda _t: (0.5, 0.2), mount="fixed").capture(0.0)
    on_head = _camera(_one(10.0), lambda _t: (0.5, 0.2)).capture(0.0)
    assert np.array_equal(still.image, turning.image)
    assert not np.array_equal(still.image, on_head.image)


@pytest.mark.parametrize("azimuth_deg", [60.0, -60.0, 180.0, 100.0])
def test_a_person_out_of_the_field_of_view_is_not_drawn(azimuth_deg: float) -> None:
    camera = _camera(_one(azimuth_deg))
    frame = camera.capture(0.0)
    assert _drawn(frame.image) is None  # every pixel is the background
    assert camera.seen(frame) == ()


def test_a_person_at_the_edge_of_the_view_is_drawn_in_part() -> None:
    camera = _camera(_one(-38.0))  # the centre is out of view (32.5°), the hair is not
    drawn = _drawn(camera.capture(0.0).image)
    assert drawn is not None
    assert drawn[0] > W * 0.8  # at the right edge
    (seen,) = camera.seen(0)
    assert seen.center[0] > 1.0


def test_the_background_is_fixed_in_the_world() -> None:
    scene = Scene(background="gradient")
    yaw = math.radians(10)
    ahead = _camera(scene).capture(0.0).image
    turned = _camera(scene, lambda _t: (yaw, 0.0)).capture(0.0).image
    # what the turned head sees at its centre, the head ahead saw f·tan(10°) left of centre
    column = round(W / 2 - F * math.tan(yaw))
    diff = np.abs(turned[:, W // 2].astype(int) - ahead[:, column].astype(int)).mean()
    same = np.abs(turned[:, W // 2].astype(int) - ahead[:, W // 2].astype(int)).mean()
    assert diff < 3 < same


def test_a_scripted_move_happens_at_its_time() -> None:
    scene = _one(0.0)
    scene.move("ann", 20.0, at=5.0)
    scene.remove("ann", at=8.0)
    camera = _camera(scene)
    before, after, gone = (_drawn(camera.capture(t).image) for t in (4.99, 5.0, 8.0))
    assert before is not None
    assert after is not None
    assert before[0] == pytest.approx(W / 2, abs=1)
    assert after[0] == pytest.approx(W / 2 - F * math.tan(math.radians(20)), abs=1)
    assert gone is None


def test_two_people_are_two_faces_the_nearer_drawn_over_the_farther() -> None:
    scene = Scene(background=GREEN)
    scene.add("ann", 10.0, distance_m=1.0)
    scene.add("bob", -12.0, distance_m=1.5, face="mirrored")
    camera = _camera(scene)
    frame = camera.capture(0.0)
    seen = camera.seen(frame)
    assert [s.name for s in seen] == ["bob", "ann"]
    assert seen[0].center[0] > 0.5 > seen[1].center[0]  # bob right, ann left
    with pytest.raises(ConfigError, match="already"):
        scene.add("ann", 0.0)
    with pytest.raises(ConfigError, match="nobody"):
        scene.move("cy", 0.0, at=1.0)


class _Sink:
    """Collects what a camera hands on, with the clock's time at each delivery."""

    def __init__(self, clock: FakeClock, wanted: int) -> None:
        self.clock = clock
        self.frames: list[tuple[VideoFrame, float]] = []
        self.ends: list[str] = []
        self.enough = threading.Event()
        self.wanted = wanted

    def frame(self, frame: VideoFrame) -> None:
        self.frames.append((frame, self.clock.now()))
        if len(self.frames) >= self.wanted:
            self.enough.set()

    def end(self, reason: str) -> None:
        self.ends.append(reason)


def _run(camera: SimHeadCamera, clock: FakeClock, frames: int) -> _Sink:
    sink = _Sink(clock, frames)
    camera.start(sink)
    assert sink.enough.wait(REAL_BOUND_S)
    camera.stop()
    camera.stop()  # idempotent
    return sink


def test_frames_come_at_the_fps_on_the_runtime_clock_stamped_with_their_capture() -> None:
    with FakeClock(start=100.0, autojump=True) as clock:
        asked: list[float] = []

        def ahead(t: float) -> tuple[float, float]:
            asked.append(t)
            return 0.0, 0.0

        camera = _camera(_one(0.0), ahead, clock)
        assert isinstance(camera, Camera)
        sink = _run(camera, clock, 10)
    frames = sink.frames[:10]
    assert [f.index for f, _ in frames] == list(range(10))
    assert [f.t for f, _ in frames] == pytest.approx([100.0 + k / 15 for k in range(10)])
    assert [at for _, at in frames] == pytest.approx([f.t for f, _ in frames])  # no latency
    assert asked[:10] == [f.t for f, _ in frames]  # each rendered for the pose at its capture
    assert frames[0][0].image.shape == (H, W, 3)
    assert sink.ends == ["stopped"]


def test_latency_delays_the_delivery_not_the_stamp_nor_the_pose() -> None:
    def turning(t: float) -> tuple[float, float]:  # the head turns left at 0.5 rad/s
        return 0.5 * (t - 100.0), 0.0

    with FakeClock(start=100.0, autojump=True) as clock:
        camera = _camera(_one(0.0), turning, clock, latency_s=0.08)
        sink = _run(camera, clock, 8)
    frames = sink.frames[:8]
    assert [f.t for f, _ in frames] == pytest.approx([100.0 + k / 15 for k in range(8)])
    assert [at - f.t for f, at in frames] == pytest.approx([0.08] * 8)
    for frame, delivered in frames:
        drawn = _drawn(frame.image)
        assert drawn is not None
        # drawn for the head's yaw at capture, not at delivery (0.04 rad further on)
        assert drawn[0] == pytest.approx(W / 2 + F * math.tan(turning(frame.t)[0]), abs=1)
        assert abs(drawn[0] - (W / 2 + F * math.tan(turning(delivered)[0]))) > 5


def test_the_sim_source_is_registered_and_checks_its_input() -> None:
    make = SOURCES.load("sim")
    camera = make(VisionConfig(source="sim"), FakeClock())
    assert isinstance(camera, Camera)
    assert isinstance(camera, SimHeadCamera)
    assert camera.capture(0.0).image.shape == (240, 320, 3)
    assert camera.seen(0)  # the default scene: one person straight ahead
    with pytest.raises(ConfigError, match="latency"):
        make_sim_camera(_config(), FakeClock(), latency_s=-1.0)
    with pytest.raises(ConfigError, match="background"):
        Scene(background="wallpaper")
    with pytest.raises(ConfigError, match="distance"):
        Scene().add("ann", 0.0, distance_m=0.0)


def test_the_camera_films_with_the_head_pose_the_engine_sent() -> None:
    engine, _, clock = make_engine()
    poses = PoseHistory(engine.body)
    engine.set_frame_tap("test.pose", poses.tap)
    camera = _camera(_one(0.0), pose_of(poses), clock)
    assert camera.seen(camera.capture(clock.now()))[0].center[0] == pytest.approx(0.5)  # at rest
    engine.set_offset("test", head=(0.0, 0.0, math.radians(15)), bandwidth_hz=6.0)
    engine.run(300)  # three seconds: the head has turned 15° left
    (seen,) = camera.seen(camera.capture(clock.now()))
    assert seen.center[0] * W == pytest.approx(W / 2 + F * math.tan(math.radians(15)), abs=1)
