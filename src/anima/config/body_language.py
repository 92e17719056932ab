"""The ``body_language`` section: how the body shows each phase of the conversation.

Each phase's pose is an additive offset (the engine's offset layer: it never fights a commanded
move): the head as (roll, pitch, yaw) and the eyes as (yaw, pitch), in radians (negative pitch
looks up on the shipped Nadine body). A body without eyes or a neck simply leaves that part out.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from anima.config.bounds import seconds
from anima.errors import ConfigError

MAX_OFFSET_RAD = 0.5  # a pose is a lean or a glance, not a move (~29°)

Head = tuple[float, float, float]
Eyes = tuple[float, float]


@dataclass(frozen=True, kw_only=True)
class BodyLanguageConfig:
    enabled: bool = True
    listening_head: Head = (0.0, 0.06, 0.0)  # attentive: head slightly forward and down
    listening_eyes: Eyes = (0.0, 0.0)  # eyes stay on the speaker
    thinking_head: Head = (0.04, 0.0, 0.0)  # head stays toward the person, a slight tilt
    thinking_eyes: Eyes = (0.25, -0.2)  # gaze aversion: eyes up and aside
    interrupted_head: Head = (0.0, -0.05, 0.0)  # a small start back
    interrupted_eyes: Eyes = (0.0, 0.0)
    sleeping_head: Head = (0.0, 0.25, 0.0)  # resting: head down
    sleeping_eyes: Eyes = (0.0, 0.2)
    sleep_animation: str | None = "breathingSlow"  # played while sleeping (a looping idle layer)
    nod_rad: float = 0.06  # the small nod when the listening person pauses (pitch, radians)
    nod_s: float = 0.3  # how long a nod holds down before it comes back
    nod_every_s: float = 1.5  # at most one nod this often
    pose_hz: float = 1.0  # how fast a pose is reached (the offset's bandwidth)

    def __post_init__(self) -> None:
        for key in (
            "listening_head", "listening_eyes", "thinking_head", "thinking_eyes",
            "interrupted_head", "interrupted_eyes", "sleeping_head", "sleeping_eyes",
        ):  # fmt: skip
            value = getattr(self, key)
            width = 3 if key.endswith("head") else 2
            if len(value) != width or not all(
                isinstance(v, int | float) and math.isfinite(v) and abs(v) <= MAX_OFFSET_RAD
                for v in value
            ):
                raise ConfigError(
                    f"body_language.{key} must be {width} angles within ±{MAX_OFFSET_RAD} rad, "
                    f"got {value!r}"
                )
        if not (math.isfinite(self.nod_rad) and 0 <= self.nod_rad <= 0.2):
            raise ConfigError(f"body_language.nod_rad must be in [0, 0.2] rad, got {self.nod_rad}")
        seconds("body_language", 5, nod_s=self.nod_s)
        seconds("body_language", 60, nod_every_s=self.nod_every_s)
        if not (math.isfinite(self.pose_hz) and 0.1 <= self.pose_hz <= 5):
            raise ConfigError(f"body_language.pose_hz must be in [0.1, 5], got {self.pose_hz}")
