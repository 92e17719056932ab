"""Write Reachy Mini's starter animations (src/anima/animation/data/reachy_mini/*.xml).

Each is a few smooth curves in the Reachy body's units (128 the centre; 1 unit = 1 degree, or
1 mm for the head's translation), 30 ms a frame. Run it again after changing a curve; the tests
check every file against the body's limits.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "src" / "anima" / "animation" / "data" / "reachy_mini"
FRAME_S = 0.03
CHANNELS = {
    "head_x": 1, "head_y": 2, "head_z": 3, "head_roll": 4, "head_pitch": 5, "head_yaw": 6,
    "antenna_right": 7, "antenna_left": 8, "body_yaw": 9,
}  # fmt: skip
Curve = Callable[[float], float]  # seconds → offset from the centre, in units


def ease(u: float) -> float:
    """Min-jerk 0 → 1 over u in [0, 1]."""
    u = min(1.0, max(0.0, u))
    return u * u * u * (10 - 15 * u + 6 * u * u)


def bell(t: float, start: float, end: float) -> float:
    """0 → 1 → 0 between start and end (a raised cosine)."""
    if not start <= t <= end:
        return 0.0
    return 0.5 - 0.5 * math.cos(2 * math.pi * (t - start) / (end - start))


def write(name: str, comment: str, seconds: float, curves: dict[str, Curve]) -> None:
    n = round(seconds / FRAME_S) + 1
    lines = [
        "<?xml version='1.0' encoding='utf-8'?>",
        f"<!-- {comment} (scripts/gen_reachy_animations.py) -->",
        "<animation>",
        f"  <animation_name>{name}</animation_name>",
    ]
    for channel, curve in sorted(curves.items(), key=lambda kv: CHANNELS[kv[0]]):
        values = [128 + round(curve(i * FRAME_S)) for i in range(n)]
        assert all(0 <= v <= 255 for v in values), (name, channel)
        tag = f"channel{CHANNELS[channel]}"
        lines.append(f"  <{tag}>{' '.join(map(str, values))}</{tag}>")
    lines.append("</animation>")
    (OUT / f"{name}.xml").write_text("\n".join(lines) + "\n", encoding="utf-8")


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    # yes: two dips of the head, the antennas lifting a little with each
    write("nod", "two nods: yes", 1.3, {
        "head_pitch": lambda t: 14 * (bell(t, 0.0, 0.6) + bell(t, 0.6, 1.2)),
        "antenna_right": lambda t: -10 * bell(t, 0.0, 1.2),
        "antenna_left": lambda t: 10 * bell(t, 0.0, 1.2),
    })  # fmt: skip
    # no: the head turns left, right, left, back
    write("shake", "a head shake: no", 1.5, {
        "head_yaw": lambda t: 22 * math.sin(2 * math.pi * t / 0.7) * bell(t, 0.0, 1.4),
    })  # fmt: skip
    # look around: left, then right, the body following a little, then back
    write("look_around", "looking around the room", 4.0, {
        "head_yaw": lambda t: 45 * (bell(t, 0.0, 1.8) - bell(t, 1.8, 3.8)),
        "head_pitch": lambda t: -6 * (bell(t, 0.0, 1.8) + bell(t, 1.8, 3.8)),
        "body_yaw": lambda t: 12 * (bell(t, 0.2, 1.8) - bell(t, 2.0, 3.8)),
    })  # fmt: skip
    # happy: the antennas wag fast, the head bobs
    write("happy_antennas", "happy: antennas wagging", 2.0, {
        "antenna_right": lambda t: 35 * math.sin(2 * math.pi * t / 0.4) * bell(t, 0.0, 2.0),
        "antenna_left": lambda t: -35 * math.sin(2 * math.pi * t / 0.4) * bell(t, 0.0, 2.0),
        "head_z": lambda t: 6 * bell(t, 0.0, 1.0) + 6 * bell(t, 1.0, 2.0),
        "head_roll": lambda t: 6 * math.sin(2 * math.pi * t / 1.0) * bell(t, 0.0, 2.0),
    })  # fmt: skip
    # sad: the head sinks and droops, the antennas hang, then it comes back slowly
    write("sad", "sad: head down, antennas hanging", 3.5, {
        "head_pitch": lambda t: 22 * bell(t, 0.0, 3.5),
        "head_z": lambda t: -10 * bell(t, 0.0, 3.5),
        "head_roll": lambda t: 8 * bell(t, 0.3, 3.3),
        "antenna_right": lambda t: 70 * bell(t, 0.0, 3.5),
        "antenna_left": lambda t: -70 * bell(t, 0.0, 3.5),
    })  # fmt: skip
    # curious: a tilt of the head, leaning in, one antenna up
    write("curious", "curious: head tilted, leaning in", 2.5, {
        "head_roll": lambda t: 18 * bell(t, 0.0, 2.5),
        "head_x": lambda t: 10 * bell(t, 0.0, 2.5),
        "head_pitch": lambda t: -6 * bell(t, 0.0, 2.5),
        "antenna_right": lambda t: -40 * bell(t, 0.2, 2.3),
    })  # fmt: skip
    # wake up: from the sleep posture up to neutral, a stretch of the antennas
    write("wake_up", "waking up: from sleep to neutral", 3.0, {
        "head_z": lambda t: -20 + 20 * ease(t / 2.0),
        "head_pitch": lambda t: 25 - 25 * ease(t / 2.0),
        "antenna_right": lambda t: -100 + 100 * ease((t - 0.5) / 2.0) - 20 * bell(t, 2.2, 3.0),
        "antenna_left": lambda t: 100 - 100 * ease((t - 0.5) / 2.0) + 20 * bell(t, 2.2, 3.0),
    })  # fmt: skip
    # go to sleep: the head sinks and the antennas fold back (ends in the sleep posture)
    write("go_to_sleep", "going to sleep: to the sleep posture", 3.0, {
        "head_z": lambda t: -20 * ease(t / 2.5),
        "head_pitch": lambda t: 25 * ease(t / 2.5),
        "head_roll": lambda t: 0.0,
        "antenna_right": lambda t: -100 * ease((t - 0.3) / 2.5),
        "antenna_left": lambda t: 100 * ease((t - 0.3) / 2.5),
    })  # fmt: skip


if __name__ == "__main__":
    main()
