"""What attention shows the runtime's state: the people it tracks and where it looks, and why
(the ``attention`` key of the state: docs/attention.md). The policy that fills it is
:mod:`anima.attention`; the types live with the wire so every client reads them back.

Angles here are in degrees (the state is read by people and dashboards), in the robot frame:
azimuth positive to the robot's left, elevation positive up.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, cast

from anima.wire.jsontypes import JsonObject

TargetKind = Literal["person", "voice", "idle", "commanded", "none"]
TARGET_KINDS: tuple[TargetKind, ...] = ("person", "voice", "idle", "commanded", "none")


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
    name: str | None = None  # the name they gave while the robot looked at them (no recognition)


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

    def to_json(self) -> JsonObject:
        """JSON-ready, angles rounded to 0.1°, times to the millisecond."""
        fields = dataclasses.asdict(self)
        fields["t"] = round(self.t, 3)
        for key in ("azimuth_deg", "elevation_deg", "voice_azimuth_deg"):
            if fields[key] is not None:
                fields[key] = round(fields[key], 1)
        fields["people"] = [
            {
                **p,
                "azimuth_deg": round(p["azimuth_deg"], 1),
                "elevation_deg": round(p["elevation_deg"], 1),
                "distance_m": round(p["distance_m"], 2),
                "last_seen": round(p["last_seen"], 3),
            }
            for p in fields["people"]
        ]
        return fields

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> AttentionSnapshot:
        """Read back; a target kind this reader does not know reads as ``none``."""

        def angle(key: str) -> float | None:
            value = data.get(key)
            return None if value is None else float(value)

        target = data.get("target", "none")
        person = data.get("person")
        return cls(
            t=float(data.get("t", 0.0)),
            people=tuple(
                PersonState(
                    id=int(p["id"]),
                    azimuth_deg=float(p.get("azimuth_deg", 0.0)),
                    elevation_deg=float(p.get("elevation_deg", 0.0)),
                    distance_m=float(p.get("distance_m", 0.0)),
                    facing=bool(p.get("facing", False)),
                    speaking=bool(p.get("speaking", False)),
                    last_seen=float(p.get("last_seen", 0.0)),
                    visible=bool(p.get("visible", False)),
                    name=None if p.get("name") is None else str(p["name"]),
                )
                for p in data.get("people", ())
            ),
            target=cast("TargetKind", target if target in TARGET_KINDS else "none"),
            person=None if person is None else int(person),
            azimuth_deg=angle("azimuth_deg"),
            elevation_deg=angle("elevation_deg"),
            reason=str(data.get("reason", "")),
            voice_azimuth_deg=angle("voice_azimuth_deg"),
        )
