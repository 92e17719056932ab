"""A face's place in the image → a direction in the robot frame, and the head's pose over time:
the signs, the pinhole, the parallax of an offset camera, the pose at a frame's capture time."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from anima.attention.geometry import FACE_WIDTH_M, CameraModel, point_at
from anima.attention.pose_history import HeadPose, PoseHistory, measured_lag
from anima.body import Role
from anima.config.vision import VisionConfig
from anima.drivers.feedback import Feedback
from anima.motion import Goto
from anima.testing import make_engine
from anima.vision.types import Box

pytestmark = pytest.mark.fast

W, H = 320, 240


def face_at(x: float, y: float, width: float = 0.1) -> Box:
    return Box(x - width / 2, y - width / 2, x + width / 2, y + width / 2)


def at_origin(hfov_deg: float = 65.0, mount: str = "head") -> CameraModel:
    """A camera at the head's centre (no parallax), looking forward."""
    return CameraModel(VisionConfig(position_m=(0.0, 0.0, 0.0), hfov_deg=hfov_deg, mount=mount))


def test_the_image_centre_is_straight_ahead() -> None:
    s = at_origin().sight(face_at(0.5, 0.5), W, H, None)
    assert s.azimuth == pytest.approx(0.0, abs=1e-12)
    assert s.elevation == pytest.approx(0.0, abs=1e-12)


def test_the_image_right_is_the_robots_right_and_its_top_is_up() -> None:
    cam = at_origin()
    right = cam.sight(face_at(0.8, 0.5), W, H, None)
    left = cam.sight(face_at(0.2, 0.5), W, H, None)
    up = cam.sight(face_at(0.5, 0.2), W, H, None)
    assert right.azimuth < 0 < left.azimuth
    assert right.azimuth == pytest.approx(-left.azimuth)
    assert up.elevation > 0


@pytest.mark.parametrize("hfov", [50.0, 65.0, 90.0])
def test_the_image_edge_is_half_the_field_of_view(hfov: float) -> None:
    cam = at_origin(hfov_deg=hfov)
    edge = cam.sight(Box(0.98, 0.45, 1.0, 0.55), W, H, None)  # centre x = 0.99
    f = (W / 2) / math.tan(math.radians(hfov) / 2)
    assert edge.azimuth == pytest.approx(-math.atan((0.99 - 0.5) * W / f), abs=1e-9)
    # the vertical field is the same pinhole: square pixels, so the top edge of a 4:3 frame
    top = cam.sight(Box(0.45, 0.0, 0.55, 0.0001), W, H, None)
    assert top.elevation == pytest.approx(math.atan((H / 2) / f), abs=1e-3)


def test_a_head_camera_turns_with_the_head() -> None:
    cam = at_origin()
    turned = HeadPose(0.0, yaw=0.3, pitch=0.2)  # left and down
    s = cam.sight(face_at(0.5, 0.5), W, H, turned)
    assert s.azimuth == pytest.approx(0.3)
    assert s.elevation == pytest.approx(-0.2)


def test_a_fixed_camera_ignores_the_head() -> None:
    cam = at_origin(mount="fixed")
    s = cam.sight(face_at(0.3, 0.5), W, H, HeadPose(0.0, yaw=0.5))
    assert s.azimuth == pytest.approx(cam.sight(face_at(0.3, 0.5), W, H, None).azimuth)


def test_the_distance_comes_from_the_faces_width() -> None:
    cam = at_origin()
    for d in (0.5, 1.0, 2.5):
        width = cam.size_at(d, W)
        assert cam.distance(face_at(0.5, 0.5, width), W) == pytest.approx(d)
    # wider face, nearer; the typical face's width is the scale
    assert cam.distance(face_at(0.5, 0.5, 0.2), W) < cam.distance(face_at(0.5, 0.5, 0.1), W)
    one_metre = cam.size_at(1.0, W) * W  # pixels
    assert cam.focal(W) * FACE_WIDTH_M == pytest.approx(one_metre)


def test_parallax_of_a_camera_beside_the_head_centre() -> None:
    # a camera 10 cm to the left: a face in its image centre is left of the head's straight
    # ahead, the more so the nearer it is
    cam = CameraModel(VisionConfig(position_m=(0.0, 0.1, 0.0)))
    near = cam.sight(face_at(0.5, 0.5, cam.size_at(0.5, W)), W, H, None)
    far = cam.sight(face_at(0.5, 0.5, cam.size_at(3.0, W)), W, H, None)
    assert near.azimuth == pytest.approx(math.atan2(0.1, 0.5), abs=1e-6)
    assert far.azimuth == pytest.approx(math.atan2(0.1, 3.0), abs=1e-6)


@pytest.mark.parametrize("mount", ["head", "fixed"])
@pytest.mark.parametrize(
    "head",
    [None, HeadPose(0.0, roll=0.1, pitch=0.15, yaw=0.4), HeadPose(0.0, pitch=-0.2, yaw=-0.5)],
)
def test_projecting_and_sighting_are_inverse(mount: str, head: HeadPose | None) -> None:
    cam = CameraModel(
        VisionConfig(mount=mount, position_m=(0.06, -0.02, 0.04), rpy_deg=(2.0, 8.0, -5.0))
    )
    for az, el, d in ((0.0, 0.0, 1.0), (0.25, 0.1, 1.5), (-0.35, -0.08, 0.7)):
        point = point_at(az, el, d)
        xy = cam.project(point, head, W, H)
        assert xy is not None
        mount_point = cam.position
        if mount == "head" and head is not None:
            from anima.attention.geometry import head_rotation

            mount_point = head_rotation(head) @ cam.position
        width = cam.size_at(float(np.linalg.norm(point - mount_point)), W)
        s = cam.sight(face_at(*xy, width), W, H, head)
        assert s.azimuth == pytest.approx(az, abs=1e-6)
        assert s.elevation == pytest.approx(el, abs=1e-6)
        assert s.distance == pytest.approx(d, abs=1e-6)


def test_a_point_behind_the_camera_is_not_in_the_image() -> None:
    assert at_origin().project(point_at(math.pi, 0.0, 1.0), None, W, H) is None


# --- the head's pose over time -------------------------------------------------------------


def test_the_history_holds_the_pose_of_each_frame_sent_and_interpolates() -> None:
    engine, driver, _ = make_engine()
    poses = PoseHistory(engine.body)
    engine.set_frame_tap("pose", poses.tap)
    body = engine.body
    yaw = body.role_index(Role.NECK_YAW)
    assert yaw is not None
    cal = body.channels[yaw].calibration
    assert cal is not None
    engine.queue_move(Goto(body, {yaw: cal.zero + 40.0}, 0.5))
    engine.run(80)
    frames = driver.history()[-80:]
    for a, b in itertools.pairwise(frames[10:21]):
        mid = poses.at((a.t + b.t) / 2)
        assert mid is not None
        expected = (cal.to_radians(a.values[yaw]) + cal.to_radians(b.values[yaw])) / 2
        assert mid.yaw == pytest.approx(expected, abs=1e-12)
        assert mid.t == (a.t + b.t) / 2
    last = poses.latest()
    assert last is not None
    assert last.yaw == pytest.approx(cal.to_radians(frames[-1].values[yaw]))
    assert last.yaw == pytest.approx(40.0 * cal.rad_per_unit, abs=1e-3)
    # before the history: the oldest kept; after it: the newest
    first = poses.at(frames[0].t - 10.0)
    assert first is not None
    assert first.yaw == pytest.approx(cal.to_radians(driver.history()[0].values[yaw]))
    later = poses.at(frames[-1].t + 10.0)
    assert later is not None
    assert later.yaw == pytest.approx(last.yaw)


def test_the_history_keeps_its_last_seconds_only() -> None:
    engine, _, _ = make_engine()
    body = engine.body
    yaw = body.role_index(Role.NECK_YAW)
    assert yaw is not None
    cal = body.channels[yaw].calibration
    assert cal is not None
    poses = PoseHistory(body, seconds=0.5, rate_hz=100.0)
    values = body.defaults()
    for k in range(200):
        values[yaw] = cal.zero + k * 0.1
        poses.add(k / 100, values)
    assert len(poses) == 50
    oldest = poses.at(0.0)  # before the kept window: the oldest pose kept (sent at 1.50 s)
    assert oldest is not None
    assert oldest.yaw == pytest.approx(cal.to_radians(cal.zero + 15.0))
    newest = poses.at(1.99)
    assert newest is not None
    assert newest.yaw == pytest.approx(cal.to_radians(cal.zero + 19.9))
    assert PoseHistory(body).at(1.0) is None  # empty
    assert PoseHistory(body).latest() is None


def test_a_measured_lag_shifts_the_pose_back() -> None:
    engine, _, _ = make_engine()
    body = engine.body
    yaw = body.role_index(Role.NECK_YAW)
    assert yaw is not None
    cal = body.channels[yaw].calibration
    assert cal is not None

    class Reading:
        """A driver that reads its robot back: 80 ms behind what it is sent."""

        def feedback(self) -> Feedback:
            return Feedback(0.0, body.defaults(), 0.08, 0.0, "")

    lag = measured_lag(Reading())
    assert lag is not None
    assert measured_lag(object()) is None
    poses = PoseHistory(body, lag=lag)
    values = body.defaults()
    for k in range(100):  # the yaw ramps 1 unit per 10 ms
        values[yaw] = cal.zero + k
        poses.add(k / 100, values.copy())
    pose = poses.at(0.5)
    assert pose is not None
    assert pose.t == 0.5
    assert pose.yaw == pytest.approx(cal.to_radians(cal.zero + 42.0))  # sent at 0.42 s


def test_the_pose_of_a_frame_reads_the_eyes_too() -> None:
    engine, _, _ = make_engine()
    body = engine.body
    values = body.defaults()
    eyes = body.role_index(Role.EYES_YAW)
    assert eyes is not None
    cal = body.channels[eyes].calibration
    assert cal is not None
    values[eyes] = cal.zero + 10.0
    pose = PoseHistory(body).pose_of(1.0, values)
    assert pose.eyes_yaw == pytest.approx(10.0 * cal.rad_per_unit)
    assert pose.gaze[0] == pytest.approx(pose.yaw + pose.eyes_yaw)
