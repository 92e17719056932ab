"""The closed loop: a face jumps 30° and the robot turns to look at it, filmed by the simulated
head camera.

The runtime's motion engine drives the simulated driver, stepped tick by tick on a fake clock
(:class:`~anima.testing.FakeTimeRobot`: the loop, idle life and offsets as ``anima serve`` runs
them). The simulated head camera (:mod:`anima.testing.head_camera`) renders each frame for the
head pose the engine sent at the frame's capture time; the face detector finds the face
(BlazeFace; or ``detector="truth"``: the boxes the camera drew, which leaves the detector out of
the loop); attention (tracker, policy, aim: :mod:`anima.attention`) turns head and eyes. Each
frame reaches attention ``latency_s`` after its capture (a USB camera's exposure and transfer,
the vision thread's wait) plus what the detector really cost on this machine, measured frame by
frame and added on the fake clock.

A person stands straight ahead at 0.8 m; once the gaze has settled on them they jump
``jump_deg`` to the robot's left. The camera has an 80° field of view (about Reachy Mini's head
camera: 81.4°, as its body declares it): with ``vision.hfov_deg``'s default 65°, a face 30° off
the axis is half out of the frame and BlazeFace loses it (found to 28°, not at 30°); the last
condition shows that. From the jump:

- **settle**: the time until the gaze stays within ``BAND_DEG`` of the face for the rest of the
  run (None: it never does);
- **overshoot**: how far the gaze went past the face (degrees; 0 when it never did);
- **steady error**: the mean |error| over the run's last ``STEADY_S``.

Each with latency compensation on (a detection is projected with the head pose at its frame's
capture) and off (with the pose when it arrives: the bug reachy_mini PR #1396 fixed). The gaze is
where the eyes look, head and eyes together, read from the frames the driver was sent; the
head's own yaw is shown beside it (the camera turns with the head, not with the eyes).
"""

from __future__ import annotations

import bisect
import heapq
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from anima.attention.service import Attention
from anima.bench.measure import percentile
from anima.body import Body, Role
from anima.config import AnimaConfig
from anima.config.vision import DETECTORS, AttentionConfig, VisionConfig
from anima.testing.fake_time import FakeTimeRobot
from anima.testing.head_camera import SimHeadCamera
from anima.testing.pinhole import Pinhole
from anima.testing.sim_scene import Path, Place, Scene
from anima.vision.types import Face, FaceDetector, VideoFrame

JUMP_DEG = 30.0  # the jump
DISTANCE_M = 0.8  # where the person stands (a tabletop robot's conversation distance)
HFOV_DEG = 80.0  # the camera's: a 65° one sees a 30° jump at its edge, half the face out
BAND_DEG = 3.0  # settled: within this of the face
STEADY_S = 0.5  # the steady error's window, at the run's end
LATENCY_S = 0.08  # capture → delivery, before the detector (a USB camera at 15 fps)
BEFORE_S = 2.5  # looking at the person straight ahead, before the jump
AFTER_S = 3.0  # after it
POLICY_TICK_S = 0.05  # attention's own thread ticks the policy this often between frames

Detect = Callable[[VideoFrame], list[Face]]


@dataclass(frozen=True, kw_only=True)
class Condition:
    compensation: bool  # attention.latency_compensation
    latency_s: float = LATENCY_S
    detector: str = "blazeface"  # blazeface | truth (the camera's own boxes: no detector)
    hfov_deg: float = HFOV_DEG
    distance_m: float = DISTANCE_M
    step_s: float = 0.0  # 0: the person jumps; else they walk there in this long (a steady pace)

    @property
    def label(self) -> str:
        comp = "compensated" if self.compensation else "uncompensated"
        step = f", a {self.step_s:g} s step" if self.step_s > 0 else ""
        return (
            f"{comp}, {self.latency_s * 1000:.0f} ms + {self.detector}, "
            f"{self.hfov_deg:g}° lens, {self.distance_m:g} m{step}"
        )


@dataclass(frozen=True)
class Sample:
    t: float  # seconds since the jump
    face_deg: float  # the face's azimuth
    gaze_deg: float  # head yaw + eyes yaw
    head_deg: float  # head yaw


@dataclass(frozen=True, kw_only=True)
class JumpResult:
    condition: Condition
    settle_s: float | None  # None: not settled by the run's end
    overshoot_deg: float
    steady_error_deg: float
    head_deg: float  # the head's own yaw at the end
    frames: int  # frames captured
    found: int  # frames in which the detector found the face
    detect_ms_p50: float  # the detector's real cost per frame
    detect_ms_p95: float
    trace: tuple[Sample, ...]


class _Truth:
    """The head's pose after each tick, from the frames the engine sent: what the simulated
    camera is filmed with, and what the gaze is measured by."""

    def __init__(self, body: Body) -> None:
        self._roles = []
        for role in (Role.NECK_YAW, Role.NECK_PITCH, Role.NECK_ROLL, Role.EYES_YAW):
            index = body.role_index(role)
            cal = None if index is None else body.channels[index].calibration
            self._roles.append(None if index is None or cal is None else (index, cal))
        self.times: list[float] = []
        self.poses: list[tuple[float, float, float, float]] = []  # yaw, pitch, roll, eyes yaw

    def record(self, t: float, values: Sequence[float]) -> None:
        angles = [0.0, 0.0, 0.0, 0.0]
        for k, role in enumerate(self._roles):
            if role is not None:
                angles[k] = role[1].to_radians(float(values[role[0]]))
        self.times.append(t)
        self.poses.append((angles[0], angles[1], angles[2], angles[3]))

    def head_at(self, t: float) -> tuple[float, float, float]:
        """(yaw, pitch, roll) as last sent at or before ``t``."""
        i = bisect.bisect_right(self.times, t + 1e-9) - 1
        yaw, pitch, roll, _ = self.poses[max(i, 0)]
        return yaw, pitch, roll


def _detector(
    name: str, vision: VisionConfig, camera: SimHeadCamera
) -> tuple[Detect, Callable[[], None]]:
    """The detector to run on each frame, and what closes it."""
    if name == "truth":

        def truth(frame: VideoFrame) -> list[Face]:
            return [
                Face(box=s.box, score=1.0)
                for s in camera.seen(frame)
                if 0.0 <= s.center[0] <= 1.0 and 0.0 <= s.center[1] <= 1.0
            ]

        return truth, lambda: None
    detector: FaceDetector = DETECTORS.load(name)(vision)
    return (lambda frame: detector.detect(frame.image)), detector.close


def jump(
    condition: Condition,
    *,
    jump_deg: float = JUMP_DEG,
    before_s: float = BEFORE_S,
    after_s: float = AFTER_S,
) -> JumpResult:
    """One run: the person straight ahead for ``before_s``, then ``jump_deg`` to the left for
    ``after_s``; figures from the jump."""
    vision = VisionConfig(source="sim", hfov_deg=condition.hfov_deg)  # the face mesh included
    attention = AttentionConfig(latency_compensation=condition.compensation, idle_glances=False)
    # the runtime itself runs no camera: this loop films and detects, and steps it
    config = AnimaConfig(attention=attention)
    with FakeTimeRobot(config) as robot:
        engine = robot.runtime.engine
        truth = _Truth(engine.body)
        truth.record(robot.now, engine.last_frame.tolist())
        t_jump = robot.now + before_s
        scene = Scene()
        scene.add("ann", 0.0, distance_m=condition.distance_m)
        if condition.step_s > 0:
            scene.follow("ann", _step(t_jump, jump_deg, condition.step_s, condition.distance_m))
        else:
            scene.move("ann", jump_deg, at=t_jump)
        camera = SimHeadCamera(
            scene, Pinhole.from_config(vision), robot.clock, fps=vision.fps, pose_at=truth.head_at
        )
        detect, close = _detector(condition.detector, vision, camera)
        follower = Attention(engine, robot.runtime.behaviour, robot.clock, vision, attention)
        follower.attach()
        run = _Run(robot, camera, detect, follower, truth, condition, t_jump)
        try:
            run.loop(t_jump + after_s)
        finally:
            follower.stop()
            close()
    return run.figures(jump_deg)


def _step(start: float, to_deg: float, seconds: float, distance_m: float) -> Path:
    """A walk from straight ahead to ``to_deg``, at a steady pace over ``seconds`` from
    ``start``."""

    def place(t: float) -> Place:
        done = min(1.0, max(0.0, (t - start) / seconds))
        return Place(to_deg * done, distance_m=distance_m)

    return place


@dataclass
class _Run:
    """One run's stepping: film, detect, deliver late, tick, and keep the trace."""

    robot: FakeTimeRobot
    camera: SimHeadCamera
    detect: Detect
    follower: Attention
    truth: _Truth
    condition: Condition
    t_jump: float
    trace: list[Sample] = field(default_factory=list)
    costs: list[float] = field(default_factory=list)  # the detector's, per frame (s)
    frames: int = 0
    found: int = 0

    def loop(self, end: float) -> None:
        robot, period = self.robot, self.robot.period
        ticks_per_policy = max(1, round(POLICY_TICK_S / period))
        inbox: list[tuple[float, int, VideoFrame, list[Face]]] = []  # (due, index, …)
        next_capture, tick = robot.now, 0
        while robot.now < end - 1e-9:
            now = robot.now
            if now >= next_capture - 1e-9:  # a frame, filmed with the pose sent at this tick
                frame = self.camera.capture(now, self.frames)
                started = time.perf_counter()
                faces = self.detect(frame)
                cost = time.perf_counter() - started
                self.costs.append(cost)
                self.found += bool(faces)
                due = now + self.condition.latency_s + cost
                heapq.heappush(inbox, (due, self.frames, frame, faces))
                self.frames += 1
                next_capture += 1.0 / self.camera.fps
            while inbox and inbox[0][0] <= now + 1e-9:
                _, _, frame, faces = heapq.heappop(inbox)
                self.follower.on_faces(frame, faces)
            if tick % ticks_per_policy == 0:
                self.follower.tick(now)  # what the frame tap does in the runtime, 20 times a second
            robot.advance(period)
            tick += 1
            self._sample()

    def _sample(self) -> None:
        now = self.robot.now
        self.truth.record(now, self.robot.runtime.engine.last_frame.tolist())
        yaw, _, _, eyes = self.truth.poses[-1]
        place = self.camera.scene.place("ann", now)
        if now >= self.t_jump - 0.5 and place is not None:
            self.trace.append(
                Sample(
                    now - self.t_jump,
                    place.azimuth_deg,
                    math.degrees(yaw + eyes),
                    math.degrees(yaw),
                )
            )

    def figures(self, jump_deg: float) -> JumpResult:
        after = [s for s in self.trace if s.t >= 0.0]
        settle: float | None = None
        for s in reversed(after):  # the last sample outside the band ends the settling
            if abs(s.gaze_deg - s.face_deg) > BAND_DEG:
                break
            settle = s.t
        sign = 1.0 if jump_deg >= 0 else -1.0
        overshoot = max([0.0] + [sign * (s.gaze_deg - s.face_deg) for s in after])
        last = after[-1].t if after else 0.0
        steady = [abs(s.gaze_deg - s.face_deg) for s in after if s.t >= last - STEADY_S]
        ms = [c * 1000 for c in self.costs]
        return JumpResult(
            condition=self.condition,
            settle_s=settle,
            overshoot_deg=overshoot,
            steady_error_deg=sum(steady) / len(steady) if steady else math.nan,
            head_deg=after[-1].head_deg if after else math.nan,
            frames=self.frames,
            found=self.found,
            detect_ms_p50=percentile(ms, 50) if ms else 0.0,
            detect_ms_p95=percentile(ms, 95) if ms else 0.0,
            trace=tuple(self.trace),
        )


CONDITIONS = (
    Condition(compensation=True),
    Condition(compensation=False),
    Condition(compensation=True, latency_s=0.0),
    Condition(compensation=True, latency_s=0.2),  # a slow camera or a busy detector
    Condition(compensation=False, latency_s=0.2),
    Condition(compensation=True, detector="truth"),
    Condition(compensation=False, detector="truth"),
    Condition(compensation=True, hfov_deg=65.0),  # vision.hfov_deg's default: the face is lost
    Condition(compensation=True, hfov_deg=65.0, step_s=0.5),  # … unless it moves, not teleports
)


def run(
    conditions: Sequence[Condition] = CONDITIONS, *, after_s: float = AFTER_S
) -> list[JumpResult]:
    """Each condition's jump, in order."""
    return [jump(c, after_s=after_s) for c in conditions]


def report(results: Sequence[JumpResult], out: Callable[[str], None] = print) -> None:
    """Print the figures, one line per condition."""
    out(
        f"closed loop: a face jumps {JUMP_DEG:g}° to the left "
        f"(settled: within {BAND_DEG:g}° to the end; steady: mean |error| of the last "
        f"{STEADY_S:g} s)"
    )
    for r in results:
        settle = "never" if r.settle_s is None else f"{r.settle_s:.2f} s"
        out(
            f"  {r.condition.label:<56} settle {settle:>7}  overshoot {r.overshoot_deg:4.1f}°  "
            f"steady {r.steady_error_deg:4.1f}°  head {r.head_deg:5.1f}°  "
            f"found {r.found}/{r.frames}  detector p50 {r.detect_ms_p50:.1f} ms"
        )
