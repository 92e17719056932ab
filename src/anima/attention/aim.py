"""Turning a chosen direction into the engine's secondary offsets: eyes lead, the head follows.

The direction (robot frame) is split between head and eyes by the body's
:class:`~anima.body.gaze.GazeKinematics`, as a commanded ``look_at`` is (small turns are the
eyes' alone; of a larger one the head takes ``head_share``), each within its calibrated range.
The eyes' share goes to the offset source ``attention.eyes``, followed fast; the head's to
``attention.head``, followed slowly: the eyes get there first and the head catches up, as in
people (Nadine's gaze rules).

Offsets are *added* to the primary pose. So the split, which is absolute (where head and eyes
must point), is made relative to the primary pose's head and eyes: the head offset is the
rotation from the primary head to the wanted head (roll kept). The reference is read while no
move runs and held while one does, so a gesture that moves the head plays on top of the gaze
(nothing is counter-steered: attention never fights a primary move), and a posture held under
it is allowed for once it is reached. Other sources (speech sway, body language) add their own
small offsets on top; the engine composes every head offset as a rotation.
"""

from __future__ import annotations

import math

from anima.attention.pose_history import HeadPose, PoseHistory
from anima.body.gaze import GazeKinematics, GazeSplit
from anima.motion import so3
from anima.motion.engine import MotionEngine

EYES, HEAD = "attention.eyes", "attention.head"
STILL_RAD = 0.003  # an aim that moves less than this is not sent again


class Aim:
    """Sets and lets go of attention's two offset sources on a :class:`MotionEngine`."""

    def __init__(
        self,
        engine: MotionEngine,
        kinematics: GazeKinematics,
        poses: PoseHistory,
        *,
        eyes_hz: float = 5.0,
        head_hz: float = 1.5,
        gentle_hz: float = 0.6,
    ) -> None:
        self._engine = engine
        self._kin = kinematics
        self._poses = poses
        top = engine.max_offset_bandwidth_hz
        self._eyes_hz = min(eyes_hz, top)
        self._head_hz = min(head_hz, top)
        self._gentle_hz = min(gentle_hz, top)
        self._reference: HeadPose | None = None
        self._sent: tuple[float, float, float, float, bool] | None = None
        self.split: GazeSplit | None = None  # the last split sent (None: let go)

    @property
    def active(self) -> bool:
        return self._sent is not None

    def reference(self) -> HeadPose:
        """The primary pose the offsets are relative to (see the module docstring)."""
        if self._reference is None or self._engine.is_idle:
            self._reference = self._poses.pose_of(0.0, self._engine.primary_frame)
        return self._reference

    def look(self, azimuth: float, elevation: float, *, gentle: bool = False) -> bool:
        """Aim head and eyes at a robot-frame direction; True when the offsets were set (False:
        within ``STILL_RAD`` of the last aim)."""
        split = self._kin.split(azimuth, -elevation)  # pitch > 0 looks down
        ref = self.reference()
        aim = (split.head_yaw, split.head_pitch, split.eyes_yaw, split.eyes_pitch, gentle)
        last = self._sent
        if (
            last is not None
            and last[4] == gentle
            and max(abs(a - b) for a, b in zip(aim[:4], last[:4], strict=True)) < STILL_RAD
        ):
            return False
        want = so3.from_euler(ref.roll, split.head_pitch, split.head_yaw)
        w, x, y, z = so3.from_euler(ref.roll, ref.pitch, ref.yaw)
        roll, pitch, yaw = so3.to_euler(so3.multiply(want, (w, -x, -y, -z)))
        self._engine.set_offset(
            HEAD,
            head=(_tidy(roll), _tidy(pitch), _tidy(yaw)),
            bandwidth_hz=self._gentle_hz if gentle else self._head_hz,
        )
        self._engine.set_offset(
            EYES,
            deltas=self._kin.eye_deltas(
                split.eyes_yaw - ref.eyes_yaw, split.eyes_pitch - ref.eyes_pitch
            ),
            bandwidth_hz=self._gentle_hz if gentle else self._eyes_hz,
        )
        self._sent = aim
        self.split = split
        return True

    def release(self) -> None:
        """Let head and eyes return to the primary pose (the offsets decay smoothly)."""
        if self._sent is None:
            return
        self._sent = None
        self.split = None
        self._engine.clear_offset(HEAD)
        self._engine.clear_offset(EYES)


def _tidy(angle: float) -> float:
    """Rounding noise of the quaternion round trip (1e-17 rad) is sent as 0."""
    return 0.0 if math.isclose(angle, 0.0, abs_tol=1e-12) else angle
