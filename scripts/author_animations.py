"""Author the animations anima ships (src/anima/animation/data/*.xml).

Each gesture is a few key poses per channel, interpolated with a minimum-jerk profile and
sampled every 30 ms, then written in Nadine's XML format. Run after editing a gesture:

    .venv/bin/python scripts/author_animations.py
"""

from __future__ import annotations

import itertools
import math
from pathlib import Path

from anima.body import load_body
from anima.motion.minjerk import min_jerk

FRAME = 0.03
OUT = Path(__file__).resolve().parent.parent / "src" / "anima" / "animation" / "data"
BODY = load_body()
DEFAULTS = {ch.name: ch.default for ch in BODY.channels}

Keys = list[tuple[float, float]]  # (time s, value)


def track(keys: Keys) -> list[float]:
    """Sample a key list with min-jerk segments every FRAME seconds."""
    end = keys[-1][0]
    n = round(end / FRAME) + 1
    out = []
    for i in range(n):
        t = i * FRAME
        for (t0, v0), (t1, v1) in itertools.pairwise(keys):
            if t <= t1 + 1e-9:
                r = 0.0 if t1 == t0 else (t - t0) / (t1 - t0)
                out.append(v0 + (v1 - v0) * min_jerk(r))
                break
        else:
            out.append(keys[-1][1])
    return out


def write(name: str, tracks: dict[str, list[float]], comment: str, frame_ms: int = 30) -> None:
    lines = ["<?xml version='1.0' encoding='utf-8'?>", f"<!-- {comment} -->"]
    attr = "" if frame_ms == 30 else f' frame_ms="{frame_ms}"'
    lines.append(f"<animation{attr}>")
    lines.append(f"  <animation_name>{name}</animation_name>")
    for number, ch in enumerate(BODY.channels, start=1):
        if ch.name not in tracks:
            continue
        values = [max(ch.min, min(ch.max, round(v))) for v in tracks[ch.name]]
        text = " ".join(str(int(v)) for v in values)
        lines.append(f"  <channel{number}>{text}</channel{number}>")
    lines.append("</animation>")
    filename = OUT / f"{name}.xml"
    filename.write_text("\n".join(lines) + "\n", encoding="utf-8")


def posture(values: dict[str, float]) -> dict[str, list[float]]:
    return {k: [v] for k, v in values.items()}


def keyed(spec: dict[str, Keys]) -> dict[str, list[float]]:
    return {k: track(v) for k, v in spec.items()}


def d(name: str) -> float:
    return DEFAULTS[name]


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    write("LOOKUPPostureDefault", posture(DEFAULTS), "every channel at rest: the neutral pose")
    blink_keys: Keys = [(0, 170), (0.07, 40), (0.10, 40), (0.24, 170)]
    full = posture(DEFAULTS)
    full["eyelids"] = track(blink_keys)
    write("LOOKUPPostureDefaultBlink", full, "back to the neutral pose with one blink")
    write("blink", {"eyelids": track(blink_keys)}, "one blink (an idle layer on the eyelids)")
    n = round(4.8 / FRAME)
    write(
        "breathingSlow",
        {
            "neck_pitch": [d("neck_pitch") + 3 * math.sin(2 * math.pi * i / n) for i in range(n)],
            "torso_pitch": [d("torso_pitch") + 4 * math.sin(2 * math.pi * i / n) for i in range(n)],
            "r_shoulder_roll": [
                d("r_shoulder_roll") + 2 * math.sin(2 * math.pi * i / n) for i in range(n)
            ],
            "l_shoulder_roll": [
                d("l_shoulder_roll") + 2 * math.sin(2 * math.pi * i / n) for i in range(n)
            ],
        },
        "one slow breath, 4.8 s (an idle layer: loops while nothing else moves those channels)",
    )
    write(
        "nod",
        keyed(
            {
                "neck_pitch": [
                    (0, 128),
                    (0.25, 150),
                    (0.5, 122),
                    (0.75, 146),
                    (1.0, 124),
                    (1.25, 128),
                ],
                "brows": [(0, 128), (0.25, 140), (1.0, 140), (1.25, 128)],
            }
        ),
        "two nods: yes (a head animation: position look-at waits until it ends)",
    )
    write(
        "shake",
        keyed(
            {
                "neck_yaw": [
                    (0, 128),
                    (0.25, 152),
                    (0.6, 104),
                    (0.95, 148),
                    (1.3, 110),
                    (1.6, 128),
                ],
                "brows": [(0, 128), (0.3, 112), (1.3, 112), (1.6, 128)],
            }
        ),
        "shakes the head: no (a head animation: position look-at waits until it ends)",
    )
    write(
        "smile",
        keyed(
            {
                "lip_wide": [(0, 20), (0.4, 125), (1.8, 125), (2.3, 20)],
                "lip_open": [(0, 30), (0.4, 42), (1.8, 42), (2.3, 30)],
                "eyelids": [(0, 170), (0.4, 150), (1.8, 150), (2.3, 170)],
                "brows": [(0, 128), (0.4, 146), (1.8, 146), (2.3, 128)],
            }
        ),
        "a warm smile held for about a second and a half",
    )
    wave_yaw: Keys = [(0, 128), (0.9, 128)]
    for k in range(4):
        wave_yaw += [(1.2 + 0.6 * k, 168), (1.5 + 0.6 * k, 92)]
    wave_yaw += [(3.9, 128)]
    write(
        "LOOKUP_Waving",
        keyed(
            {
                "r_shoulder_pitch": [(0, 40), (0.9, 205), (3.6, 205), (4.6, 40)],
                "r_shoulder_roll": [(0, 60), (0.9, 110), (3.6, 110), (4.6, 60)],
                "r_elbow": [(0, 50), (0.9, 165), (3.6, 165), (4.6, 50)],
                "r_wrist_yaw": [*wave_yaw, (4.6, 128)],
                "r_hand": [(0, 30), (0.9, 22), (3.6, 22), (4.6, 30)],
                "neck_roll": [(0, 128), (0.9, 136), (3.6, 136), (4.6, 128)],
                "brows": [(0, 128), (0.6, 150), (3.9, 150), (4.6, 128)],
            }
        ),
        "raises the right arm and waves hello (clears pending gestures)",
    )
    write(
        "shakehand_TwoArgGesture",
        keyed(
            {
                "r_shoulder_pitch": [
                    (0, 40),
                    (1.0, 130),
                    (1.4, 130),
                    (1.6, 120),
                    (1.8, 132),
                    (2.0, 120),
                    (2.2, 132),
                    (2.4, 126),
                    (3.2, 126),
                    (4.2, 40),
                ],
                "r_elbow": [(0, 50), (1.0, 95), (3.2, 95), (4.2, 50)],
                "r_shoulder_yaw": [(0, 128), (1.0, 116), (3.2, 116), (4.2, 128)],
                "r_hand": [
                    (0, 30),
                    (0.8, 20),
                    (1.3, 20),
                    (1.5, 150),
                    (2.8, 150),
                    (3.1, 20),
                    (4.2, 30),
                ],
                "r_thumb": [(0, 30), (1.3, 30), (1.5, 130), (2.8, 130), (3.1, 30), (4.2, 30)],
                "eyes_pitch": [(0, 128), (0.6, 140), (2.4, 140), (3.0, 128)],
            }
        ),
        "offers the right hand, shakes, and lets go",
    )
    write(
        "Posture_LookAtInterviewer",
        posture(
            {
                "neck_yaw": 106,
                "neck_pitch": 126,
                "neck_roll": 124,
                "eyes_yaw": 116,
                "eyes_pitch": 128,
                "eyelids": 176,
            }
        ),
        "gaze posture: the interviewer, seated to the robot's right",
    )
    write(
        "Posture_LookAtZoom",
        posture(
            {
                "neck_yaw": 138,
                "neck_pitch": 120,
                "neck_roll": 128,
                "eyes_yaw": 134,
                "eyes_pitch": 122,
                "eyelids": 176,
            }
        ),
        "gaze posture: the camera of a video call, ahead and slightly left and up",
    )
    write(
        "SHUTDOWN_NADINE",
        keyed(
            {
                "eyelids": [(0, 170), (1.5, 120), (2.6, 40)],
                "neck_pitch": [(0, 128), (2.6, 168)],
                "neck_yaw": [(0, 128), (2.6, 128)],
                "neck_roll": [(0, 128), (2.6, 128)],
                "eyes_yaw": [(0, 128), (1.0, 128)],
                "eyes_pitch": [(0, 128), (2.0, 140)],
                "lip_open": [(0, 30), (1.0, 30)],
                "lip_wide": [(0, 20), (1.0, 20)],
                "lip_narrow": [(0, 20), (1.0, 20)],
                "brows": [(0, 128), (2.0, 110)],
                "torso_pitch": [(0, 128), (2.6, 140)],
                "r_shoulder_pitch": [(0, 40), (2.6, 25)],
                "l_shoulder_pitch": [(0, 40), (2.6, 25)],
                "r_elbow": [(0, 50), (2.6, 35)],
                "l_elbow": [(0, 50), (2.6, 35)],
            }
        ),
        "powers down: eyes close, head and arms sink (clears pending gestures)",
    )
    write(
        "think",
        keyed(
            {
                "neck_roll": [(0, 128), (0.6, 144), (2.4, 144), (3.0, 128)],
                "neck_pitch": [(0, 128), (0.6, 120), (2.4, 120), (3.0, 128)],
                "eyes_yaw": [(0, 128), (0.4, 152), (2.4, 152), (3.0, 128)],
                "eyes_pitch": [(0, 128), (0.4, 104), (2.4, 104), (3.0, 128)],
                "brows": [(0, 128), (0.6, 100), (2.4, 100), (3.0, 128)],
                "lip_narrow": [(0, 20), (0.6, 70), (2.4, 70), (3.0, 20)],
            }
        ),
        "tilts the head and looks up and away, as if thinking",
    )
    write(
        "surprise",
        keyed(
            {
                "eyelids": [(0, 170), (0.15, 225), (1.2, 225), (1.7, 170)],
                "brows": [(0, 128), (0.15, 195), (1.2, 195), (1.7, 128)],
                "lip_open": [(0, 30), (0.2, 120), (1.0, 120), (1.6, 30)],
                "neck_pitch": [(0, 128), (0.2, 116), (1.2, 116), (1.7, 128)],
            }
        ),
        "eyes wide, brows up, mouth open",
    )
    write(
        "bow",
        keyed(
            {
                "torso_pitch": [(0, 128), (0.9, 148), (1.6, 148), (2.5, 128)],
                "neck_pitch": [(0, 128), (0.9, 165), (1.6, 165), (2.5, 128)],
                "eyelids": [(0, 170), (0.9, 110), (1.6, 110), (2.5, 170)],
            }
        ),
        "a polite bow",
    )
    write(
        "point_right",
        keyed(
            {
                "r_shoulder_pitch": [(0, 40), (0.8, 150), (2.2, 150), (3.0, 40)],
                "r_shoulder_roll": [(0, 60), (0.8, 150), (2.2, 150), (3.0, 60)],
                "r_elbow": [(0, 50), (0.8, 40), (2.2, 40), (3.0, 50)],
                "r_hand": [(0, 30), (0.8, 160), (2.2, 160), (3.0, 30)],
                "neck_yaw": [(0, 128), (0.6, 104), (2.2, 104), (3.0, 128)],
                "eyes_yaw": [(0, 128), (0.3, 100), (2.2, 100), (3.0, 128)],
            }
        ),
        "points to the robot's right and looks there",
    )


if __name__ == "__main__":
    main()
