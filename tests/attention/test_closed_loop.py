"""The closed loop on the simulated head camera: a face jumps 30° and the robot turns to it,
BlazeFace finding the face in frames rendered for the head pose at their capture; the loop is
the runtime's engine on the simulated driver, stepped on a fake clock.

Looser bounds than the issue's figures (``anima bench attention`` prints those): this checks
the loop turns, settles and does not swing past the face, with a latency and without.
"""

from __future__ import annotations

import threading

import pytest

from anima.bench.attention.closed_loop import Condition, jump
from anima.config.vision import DETECTORS, VisionConfig
from anima.testing import FakeClock
from anima.testing.head_camera import make_sim_camera
from anima.testing.sim_scene import Scene
from anima.vision.pipeline import VisionPipeline
from anima.vision.types import Face, VideoFrame

pytestmark = pytest.mark.model  # BlazeFace

REAL_BOUND_S = 10.0  # only a hang reaches it


@pytest.mark.parametrize("compensation", [True, False])
def test_the_gaze_follows_a_face_that_jumps_30_degrees(compensation: bool) -> None:
    result = jump(Condition(compensation=compensation, latency_s=0.08), before_s=1.5, after_s=2.0)
    assert result.found >= 0.8 * result.frames  # BlazeFace saw the face in the rendered frames
    assert result.settle_s is not None
    assert result.settle_s <= 2.0
    assert result.overshoot_deg <= 8.0
    assert result.steady_error_deg <= 3.0
    assert result.head_deg > 10.0  # the head turned, not the eyes alone
    before = [s for s in result.trace if s.t < 0]
    assert before
    assert all(abs(s.gaze_deg) < 3.0 for s in before)  # it looked at the face straight ahead


def test_with_the_default_lens_a_person_who_walks_30_degrees_is_followed() -> None:
    """A 30° jump puts the face at the 65° lens's edge, where it is lost; a person walks, and a
    face that moves between frames stays in view (measured: settled 0.92 s after a 0.5 s
    step's start)."""
    walked = jump(
        Condition(compensation=True, hfov_deg=65.0, step_s=0.5), before_s=1.5, after_s=2.0
    )
    assert walked.settle_s is not None
    assert walked.settle_s <= 2.0
    assert walked.steady_error_deg <= 3.0
    jumped = jump(Condition(compensation=True, hfov_deg=65.0), before_s=1.5, after_s=1.0)
    assert jumped.settle_s is None  # the jump: the face left the view between two frames


def test_the_sim_camera_feeds_the_vision_thread_on_autojump_time() -> None:
    # the threaded path anima serve runs: the camera's thread, the vision worker, BlazeFace
    vision = VisionConfig(source="sim", hfov_deg=80.0)
    with FakeClock(start=100.0, autojump=True) as clock:
        scene = Scene()
        scene.add("ann", 10.0, distance_m=0.8)
        scene.move("ann", -20.0, at=100.5)
        camera = make_sim_camera(vision, clock, scene=scene, latency_s=0.08)
        got: list[tuple[VideoFrame, float, list[Face]]] = []
        enough = threading.Event()

        def on_faces(frame: VideoFrame, faces: list[Face]) -> None:
            got.append((frame, clock.now(), faces))
            if len(got) >= 20:
                enough.set()

        pipeline = VisionPipeline(
            camera, DETECTORS.load("blazeface")(vision), on_faces, clock=clock
        )
        pipeline.start()
        assert enough.wait(REAL_BOUND_S)
        pipeline.stop()
    assert len(got) >= 20
    for frame, delivered, faces in got[:20]:
        assert delivered - frame.t == pytest.approx(0.08)  # the detector's cost is not fake time
        (drawn,) = camera.seen(frame)
        assert len(faces) == 1
        assert faces[0].box.center[0] == pytest.approx(drawn.center[0], abs=0.03)
    assert {round(drawn.center[0], 1) for drawn in (camera.seen(f)[0] for f, _, _ in got)} == {
        0.4,
        0.7,
    }  # the face moved from 10° left to 20° right of the lens's axis
