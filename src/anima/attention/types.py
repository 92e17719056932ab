"""What attention shows the runtime's state: the people it tracks and where it looks, and why.

Angles here are in degrees (the state is read by people and dashboards), in the robot frame:
azimuth positive to the robot's left, elevation positive up.
"""

from __future__ import annotations

from dataclasses import dataclass

from anima.attention.policy import TargetKind


@dataclass(frozen=True, kw_only=True)
class PersonState:
    """One tracked person."""

    id: int  # stable across frames and brief occlusions
    azimuth_deg: float  # smoothed
    elevation_deg: float
    distance_m: float  # estimated from the face's size
    facing: bool  # the face is turned toward the robot
    speaking: bool  # the mouth moves, or a voice came from them
    last_seen: float  # runtime clock (s)
    visible: bool  # seen in the newest frame


@dataclass(frozen=True, kw_only=True)
class AttentionSnapshot:
    """Attention at ``t``: who is there, what the robot looks at, and why."""

    t: float  # runtime clock (s)
    people: tuple[PersonState, ...]
    target: TargetKind  # person | voice | idle | commanded | none
    person: int | None  # the person looked at (``target == "person"``)
    azimuth_deg: float | None  # where attention aims (None: it lets the gaze go)
    elevation_deg: float | None
    reason: str  # why, in a few words ("speaking", "look_at", "idle glance" …)
    voice_azimuth_deg: float | None  # the last voice heard from someone else (not own voice)
