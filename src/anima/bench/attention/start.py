"""Missed ticks while vision starts: a runtime started with a camera, its camera in the vision
process (the default) or in the runtime's own (as before).

Each start is a fresh ``python`` (imports are once per process: a second start in the same one
would import nothing): it builds a runtime on the simulated robot with speech off and a
``video`` source (a folder of 30 frames of the astronaut's face, played at 10 fps), starts it,
waits for the video's end and half a second more, and reports the loop's missed ticks since its
first tick and whether OpenCV was imported in the runtime's process. The two conditions
alternate, so a slower minute of the machine falls on both. In the runtime's process OpenCV's
import holds the interpreter lock 25-55 ms in one call, longer than two periods of the loop.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from anima.bench.attention.gaze import write_clip

CONDITIONS = ("vision process", "runtime process")
TIMEOUT_S = 120.0  # one start, its video and its stop, on a loaded machine

SCRIPT = """
import json, sys, time
import anima.attention.part as part
if sys.argv[2] == "runtime process":
    part.SOURCES_SEEN_THERE = ()  # the camera made here, as before the vision process saw
from anima.build import build
from anima.config import AnimaConfig, SpeechConfig
from anima.config.vision import AttentionConfig, VisionConfig
config = AnimaConfig(
    speech=SpeechConfig(enabled=False),
    vision=VisionConfig(source="video", video_in=sys.argv[1], video_fps=10.0),
    attention=AttentionConfig(idle_glances=False),
)
runtime = build(config, doors=False, audio_in="none", report=lambda _line: None)
runtime.start()
try:
    pipeline = runtime.attention.pipeline
    ended = pipeline.wait_ended(60.0)
    time.sleep(0.5)
    loop = runtime.engine.stats()
    print(json.dumps({"ended": ended, "missed": loop.missed, "seen": pipeline.stats().processed,
                      "cv2": "cv2" in sys.modules}))
finally:
    runtime.stop(ease=False)
"""


@dataclass(frozen=True, kw_only=True)
class StartRun:
    """One condition's starts."""

    condition: str  # where the camera ran: "vision process" or "runtime process"
    missed: list[int]  # the loop's missed ticks in each start (since its first tick)
    seen: list[int]  # frames the detector ran on in each
    opencv_here: list[bool]  # whether the runtime's process imported OpenCV, in each


def run_starts(
    rounds: int = 10, *, progress: Callable[[str], None] | None = None
) -> list[StartRun]:
    """``rounds`` starts of each condition, alternating (A B, then B A)."""
    results: dict[str, list[dict[str, object]]] = {c: [] for c in CONDITIONS}
    with tempfile.TemporaryDirectory(prefix="anima-start-") as tmp:
        write_clip(Path(tmp), 30)
        for k in range(rounds):
            for condition in CONDITIONS if k % 2 == 0 else CONDITIONS[::-1]:
                done = subprocess.run(
                    [sys.executable, "-c", SCRIPT, tmp, condition],
                    capture_output=True,
                    text=True,
                    timeout=TIMEOUT_S,
                    check=False,
                )
                lines = [x for x in done.stdout.splitlines() if x.startswith("{")]
                if done.returncode != 0 or not lines:
                    raise RuntimeError(
                        f"a start with the camera in the {condition} failed: {done.stderr[-800:]}"
                    )
                figures = json.loads(lines[-1])
                results[condition].append(figures)
                if progress is not None:
                    progress(f"start {k + 1}/{rounds}, camera in the {condition}: {figures}")
    return [
        StartRun(
            condition=c,
            missed=[int(str(r["missed"])) for r in rs],
            seen=[int(str(r["seen"])) for r in rs],
            opencv_here=[bool(r["cv2"]) for r in rs],
        )
        for c, rs in results.items()
    ]


def report_lines(runs: list[StartRun]) -> list[str]:
    lines = ["vision's start: the loop's missed ticks per start of a runtime with a video camera"]
    for r in runs:
        opencv = sum(r.opencv_here)
        lines.append(
            f"  camera in the {r.condition:<15} missed {sum(r.missed):3d} in {len(r.missed)} "
            f"starts {r.missed}; frames seen per start {min(r.seen)}-{max(r.seen)}; OpenCV "
            f"imported by the runtime in {opencv} of {len(r.opencv_here)} [target: 0 missed]"
        )
    return lines
