"""A new speaker: how soon the robot turns toward a person who starts talking (issue 32's
"turn toward a new speaker ≤ 600 ms after they start talking").

A simulated room (:mod:`anima.testing.array_room`: RT60 0.3 s, SNR 10 dB, Reachy Mini's
4-microphone line, or a 6 cm square of four: ``array``) hears one person at ``first_deg`` say a
sentence, then, after a pause, a second at ``second_deg``. The array's frames go through the
voice-direction estimator (its own VAD: Silero when installed, as ``anima serve`` has it) into
attention on the runtime's engine, stepped tick by tick on fake time
(:class:`~anima.testing.FakeTimeRobot`), the policy ticked 20 times a second as its thread does.
From the second voice's first sound: when attention aimed within :data:`TOLERANCE_DEG` of them
(the decision), and when the gaze itself (head and eyes, from the frames the engine sent) got
there. Near a line's ends (70° and more) its estimates fall toward the broadside (measured: ~40°
for a talker at 70°), so the turn there is slow with the line fixed to the body; a planar array
(the square) has no such end. ``mount="head"`` puts the array on the head, as Reachy Mini's is:
the room is simulated for the head's yaw every :data:`HEAD_STEP_DEG` (each orientation once,
when the head first comes near it), and each 32 ms frame is what the array hears at the head's
yaw in the middle of that frame (the two nearest orientations mixed), so as the head turns
toward the talker they move toward the array's broadside (a closed loop, as the simulated head
camera is for faces); the estimator marks its directions ``on_head`` and attention turns them
by the head's pose when they were heard (``listen.mics_mount: head``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from anima.attention.service import Attention
from anima.audio import FRAME_SAMPLES, SAMPLE_RATE
from anima.config import AnimaConfig, AttentionConfig, VisionConfig
from anima.listening.direction.estimator import DirectionEstimator
from anima.testing import FakeTimeRobot
from anima.testing.array_room import LINEAR_4, SQUARE_4, Mic, Talker, record, talker, turned

ARRAYS: dict[str, tuple[Mic, ...]] = {"line": LINEAR_4, "square": SQUARE_4}

TARGET_MS = 600.0
TOLERANCE_DEG = 15.0
ONSET_LEVEL = 0.05  # of the speech's peak: where a voice starts
HEAD_STEP_DEG = 5.0  # an array on the head: the room is simulated every this many degrees of yaw
RT60_S, SNR_DB = 0.3, 10.0  # the room


@dataclass(frozen=True, kw_only=True)
class SpeakerTurn:
    first_deg: float
    second_deg: float
    aimed_ms: float | None  # the second voice's onset → attention aims within the tolerance
    gazed_ms: float | None  # … → the gaze (head + eyes) is within the tolerance
    vad: str
    array: str = "line"  # ARRAYS' name: the 4-microphone line, or a 6 cm square
    mount: str = "fixed"  # fixed to the body, or on the head (turning with it)
    set: str = "dev"  # dev (looked at while tuning) or heldout (only measured)

    @property
    def passed(self) -> bool:
        return self.aimed_ms is not None and self.aimed_ms <= TARGET_MS


def _onset(samples: np.ndarray) -> float:
    level = np.abs(samples.astype(np.float64))
    loud = np.flatnonzero(level >= ONSET_LEVEL * level.max())
    return float(loud[0]) / SAMPLE_RATE if len(loud) else 0.0


class Heard:
    """What the array hears of ``talkers`` (:func:`record`, the bench's room): fixed to the
    body, one recording; on the head (``on_head``), one per :data:`HEAD_STEP_DEG` of the head's
    yaw, each made the first time the head comes near it, all of the fixed one's length."""

    def __init__(
        self, mics: Sequence[Mic], talkers: Sequence[Talker], *, on_head: bool, seed: int = 0
    ) -> None:
        self.mics = tuple(mics)
        self.talkers = tuple(talkers)
        self.on_head = on_head
        self.seed = seed
        fixed = record(mics, talkers, rt60_s=RT60_S, snr_db=SNR_DB, seed=seed).signals
        self._turned: dict[int, NDArray[np.int16]] = {0: fixed}
        self.samples = len(self._turned[0])

    def _at(self, step: int) -> NDArray[np.int16]:
        """The recording with the head turned ``step`` × :data:`HEAD_STEP_DEG`."""
        if step not in self._turned:
            yaw = math.radians(step * HEAD_STEP_DEG)
            self._turned[step] = record(
                turned(self.mics, yaw), self.talkers, rt60_s=RT60_S, snr_db=SNR_DB,
                seconds=self.samples / SAMPLE_RATE, seed=self.seed,
            ).signals  # fmt: skip
        return self._turned[step]

    @property
    def orientations(self) -> int:
        """How many head orientations were simulated."""
        return len(self._turned)

    def frame(self, k: int, yaw: float) -> NDArray[np.int16]:
        """The ``k``-th 32 ms frame (samples × microphones) with the head at ``yaw`` (radians;
        ignored when the array is fixed)."""
        part = slice(k * FRAME_SAMPLES, (k + 1) * FRAME_SAMPLES)
        if not self.on_head:
            return self._turned[0][part]
        where = math.degrees(yaw) / HEAD_STEP_DEG
        low = math.floor(where)
        w = where - low
        mixed = (1.0 - w) * self._at(low)[part] + w * self._at(low + 1)[part]
        return np.round(mixed).astype(np.int16)


def run_speaker_turn(
    first_deg: float = -40.0,
    second_deg: float = 50.0,
    *,
    pause_s: float = 0.8,
    after_s: float = 2.0,
    array: str = "line",
    mount: str = "fixed",
    sentences: tuple[int, int] = (0, 1),
    seed: int = 0,
    set: str = "dev",
) -> SpeakerTurn:
    """One run (see the module docstring); ``array``: one of :data:`ARRAYS`; ``mount``:
    ``fixed`` (to the body) or ``head``; ``sentences``: what each says (indices into
    :data:`~anima.testing.array_room.SENTENCES`); ``seed``: the room's noise."""
    if mount not in ("fixed", "head"):
        raise ValueError(f"mount must be fixed or head, got {mount!r}")
    mics = ARRAYS[array]
    from anima.bench.attention.doa import _vad

    a = talker(first_deg, sentences[0])
    start_b = len(a.samples) / SAMPLE_RATE + pause_s
    b = talker(second_deg, sentences[1], start_s=start_b)
    heard = Heard(mics, [a, b], on_head=mount == "head", seed=seed)
    onset = start_b + _onset(b.samples)
    vad, vad_name = _vad()
    attention_cfg = AttentionConfig(idle_glances=False)
    with FakeTimeRobot(AnimaConfig(attention=attention_cfg)) as robot:
        engine = robot.runtime.engine
        follower = Attention(
            engine, robot.runtime.behaviour, robot.clock, VisionConfig(), attention_cfg
        )
        follower.attach()
        estimator = DirectionEstimator(mics, follower.on_voice, vad=vad, on_head=heard.on_head)
        t0 = robot.now
        end = min(heard.samples / SAMPLE_RATE, onset + after_s)
        aimed: float | None = None
        gazed: float | None = None
        fed, tick = 0, 0

        def near(deg: float | None) -> bool:
            return deg is not None and abs(deg - second_deg) <= TOLERANCE_DEG

        try:
            while robot.now - t0 < end:
                now = robot.now - t0
                while (fed + 1) * FRAME_SAMPLES / SAMPLE_RATE <= now:  # the frames heard by now
                    middle = t0 + (fed + 0.5) * FRAME_SAMPLES / SAMPLE_RATE
                    yaw = follower.poses.head_at(middle)[0]  # where the head was meanwhile
                    estimator.frame(heard.frame(fed, yaw), robot.now)
                    fed += 1
                if tick % 5 == 0:
                    follower.tick(robot.now)  # its thread's 20 Hz
                if now >= onset:
                    if aimed is None and near(follower.snapshot().azimuth_deg):
                        aimed = now - onset
                    pose = follower.poses.at(robot.now)
                    if gazed is None and pose is not None and near(math.degrees(pose.gaze[0])):
                        gazed = now - onset
                robot.advance(robot.period)
                tick += 1
        finally:
            follower.stop()
    return SpeakerTurn(
        first_deg=first_deg,
        second_deg=second_deg,
        aimed_ms=None if aimed is None else 1000 * aimed,
        gazed_ms=None if gazed is None else 1000 * gazed,
        vad=vad_name,
        array=array,
        mount=mount,
        set=set,
    )


# (first °, second °, array, mount): the runs looked at while choosing the estimator's sum
# (its time constant and threshold), and others only measured: other directions, each with two
# other pairs of sentences and noise (:data:`HELD_OUT_VOICES`)
DEV: tuple[tuple[float, float, str, str], ...] = (
    (-40.0, 50.0, "line", "fixed"), (30.0, -60.0, "line", "fixed"), (0.0, 70.0, "line", "fixed"),
    (0.0, 70.0, "line", "head"), (0.0, -75.0, "line", "head"), (20.0, 80.0, "line", "head"),
    (-40.0, 50.0, "line", "head"), (30.0, -60.0, "line", "head"), (-60.0, 10.0, "line", "head"),
    (50.0, -30.0, "line", "head"), (0.0, 70.0, "square", "fixed"),
    (-40.0, 50.0, "square", "fixed"),
)  # fmt: skip
HELD_OUT: tuple[tuple[float, float, str, str], ...] = (
    (10.0, -70.0, "line", "head"), (-70.0, 20.0, "line", "head"), (-20.0, 65.0, "line", "head"),
    (45.0, -50.0, "line", "head"), (-10.0, 85.0, "line", "head"), (10.0, -70.0, "line", "fixed"),
    (60.0, -20.0, "square", "fixed"),
)  # fmt: skip
HELD_OUT_VOICES: tuple[tuple[tuple[int, int], int], ...] = (((3, 4), 7), ((5, 2), 11))


def run_set(name: str) -> list[SpeakerTurn]:
    """The runs of one set: ``dev`` (:data:`DEV`) or ``heldout`` (:data:`HELD_OUT` with each
    of :data:`HELD_OUT_VOICES`: sentences and the noise's seed)."""
    if name == "dev":
        return [run_speaker_turn(a, b, array=arr, mount=m) for a, b, arr, m in DEV]
    return [
        run_speaker_turn(a, b, array=arr, mount=m, sentences=said, seed=seed, set="heldout")
        for said, seed in HELD_OUT_VOICES
        for a, b, arr, m in HELD_OUT
    ]


def report_lines(runs: list[SpeakerTurn]) -> list[str]:
    lines = [
        f"a new speaker (RT60 0.3 s, SNR 10 dB): from their first sound to attention "
        f"aiming within {TOLERANCE_DEG:g}° of them [target ≤ {TARGET_MS:g} ms], and to the gaze "
        "getting there"
    ]
    for r in runs:
        aimed = "never" if r.aimed_ms is None else f"{r.aimed_ms:.0f} ms"
        gazed = "never" if r.gazed_ms is None else f"{r.gazed_ms:.0f} ms"
        verdict = "ok" if r.passed else "OVER"
        lines.append(
            f"  {r.set}: {r.first_deg:+.0f}° then {r.second_deg:+.0f}° (4-mic {r.array}"
            f"{' on the head' if r.mount == 'head' else ''}): aimed {aimed} "
            f"[{verdict}], gaze {gazed} (VAD {r.vad})"
        )
    for set_ in ("dev", "heldout"):
        for kind in ("line on the head", "line", "square"):
            group = [r for r in runs if r.set == set_ and _kind(r) == kind]
            if len(group) > 1:
                ok = sum(r.passed for r in group)
                lines.append(f"  {set_}, 4-mic {kind}: {ok} of {len(group)} within the target")
    return lines


def _kind(r: SpeakerTurn) -> str:
    return f"{r.array} on the head" if r.mount == "head" else r.array
