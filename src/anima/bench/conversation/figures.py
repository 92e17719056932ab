"""The conversation bench's figures: one record per trial, and the figures of any group of them.

Word error is the word-level edit distance between what was said (the request's text) and the
final transcript, over the words said, as :func:`anima.bench.asr.asr.word_errors` counts it.
Latencies are from the moment the person stopped speaking (the last loud sample of the request)
to the first audible sample the robot's speech service played (the sink's first sample above
:data:`~anima.bench.conversation.trial.AUDIBLE`, on its playback clock), and to the first motion
(a gesture started in the engine, or the start of a step that moves: gaze, walking).

:class:`Stages` splits the first audio into the moments between (each from the one before):
the listener's end of turn, the final transcript, the planner's answer, ``start_speak`` (sent
as the reply's first synthesized audio is handed to the sink, so "speak" holds the synthesis
since issue 30), the sink having it, and its first audible sample.
"""

from __future__ import annotations

import dataclasses
import math
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np

TARGETS = {
    "intent_accuracy": 0.90,  # the robot did what was meant
    "first_audio_p50_ms": 500.0,  # end of the person's speech → first robot audio
    "wake_hit_rate": 0.95,
    "false_wakes_per_hour": 1.0,
    "word_error_rate": 0.10,
}


@dataclass(frozen=True, kw_only=True)
class Stages:
    """Where a trial's first audio went, in ms, each from the moment before (None: it did not
    happen, or a moment before it did not)."""

    # person stops → the listener decided the turn was over (an early reply: → the reading at
    # the pause that began it, the read-ahead's decode included)
    turn_end: float | None = None
    transcript: float | None = None  # → its final transcript (the ASR's finish; early: 0)
    plan: float | None = None  # → the planner's answer (queue hop to the agent + planning)
    speak: float | None = None  # → start_speak: its first audio synthesized, handed to the sink
    chunk: float | None = None  # → the sink has it (the hand-over: ~0 since start_speak waits)
    onset: float | None = None  # → its first audible sample (leading silence, a stall)


STAGE_LABELS = {
    "turn_end": "end of turn",
    "transcript": "transcript",
    "plan": "plan",
    "speak": "speak",
    "chunk": "1st chunk",
    "onset": "audible",
}  # a Stages field → its column in the report


@dataclass(frozen=True, kw_only=True)
class Trial:
    """One request spoken once, and what came of it."""

    text: str
    category: str
    split: str  # dev | heldout
    voice: str
    noise: str
    mode: str  # wake ("hey robot, …") | ptt (push-to-talk: a manual wake)
    correct: bool
    outcome: str  # correct, no_wake, wrong_action, failed, silent, answered, refused, …
    detail: str  # what ran or was said
    kind: str  # what was expected: act, answer, refuse, not_understood, stop
    woke: bool | None  # wake mode: the phrase was heard; None for push-to-talk
    transcript: str  # the final transcript(s), joined
    word_errors: int
    words: int  # words in the request
    first_audio_ms: float | None  # None: the robot said nothing after the request
    first_motion_ms: float | None  # None: nothing moved after the request
    seconds: float  # wall time the trial took
    fast_forwarded: bool = False  # nothing happened for a while: the rest fed faster than real
    # time (its latencies are left out: they would not be wall-clock figures)
    stages: Stages = field(default_factory=Stages)  # where the first audio's time went


@dataclass(frozen=True, kw_only=True)
class Spread:
    p50: float | None
    p95: float | None
    n: int


@dataclass(frozen=True, kw_only=True)
class Figures:
    """The figures of a group of trials (a split, a voice, a noise, a mode, or a category)."""

    trials: int
    correct: int
    intent_accuracy: float | None
    wake_trials: int
    wake_hits: int
    wake_hit_rate: float | None
    word_error_rate: float | None
    oov_trials: int
    oov_refused: int
    refusal_rate: float | None  # of out-of-vocabulary requests, how many were refused
    first_audio_ms: Spread
    first_motion_ms: Spread
    outcomes: dict[str, int] = field(default_factory=dict)
    stages: dict[str, Spread] = field(default_factory=dict)  # a Stages field → its spread


def word_errors(reference: str, hypothesis: str) -> int:
    """Word-level edit distance, counted as ``anima bench asr`` counts it (one definition)."""
    from anima.bench.asr.asr import word_errors as counted

    return counted(reference, hypothesis)[0]


def spread(values: Iterable[float | None]) -> Spread:
    a = np.asarray([v for v in values if v is not None and math.isfinite(v)], dtype=np.float64)
    if a.size == 0:
        return Spread(p50=None, p95=None, n=0)
    return Spread(p50=float(np.percentile(a, 50)), p95=float(np.percentile(a, 95)), n=int(a.size))


def _rate(num: int, den: int) -> float | None:
    return num / den if den else None


def figures(trials: Sequence[Trial]) -> Figures:
    woken = [t for t in trials if t.woke is not None]
    oov = [t for t in trials if t.category == "oov"]
    said = sum(t.words for t in trials)
    correct = sum(t.correct for t in trials)
    return Figures(
        trials=len(trials),
        correct=correct,
        intent_accuracy=_rate(correct, len(trials)),
        wake_trials=len(woken),
        wake_hits=sum(bool(t.woke) for t in woken),
        wake_hit_rate=_rate(sum(bool(t.woke) for t in woken), len(woken)),
        word_error_rate=_rate(sum(t.word_errors for t in trials), said),
        oov_trials=len(oov),
        oov_refused=sum(t.outcome in ("refused", "correct") for t in oov),
        refusal_rate=_rate(sum(t.outcome in ("refused", "correct") for t in oov), len(oov)),
        first_audio_ms=spread(t.first_audio_ms for t in trials),
        first_motion_ms=spread(t.first_motion_ms for t in trials),
        outcomes=dict(Counter(t.outcome for t in trials).most_common()),
        stages={
            f.name: spread(getattr(t.stages, f.name) for t in trials)
            for f in dataclasses.fields(Stages)
        },
    )


def grouped(trials: Sequence[Trial]) -> dict[str, dict[str, Figures]]:
    """Figures per split, and within each split per voice, noise, mode and category."""
    out: dict[str, dict[str, Figures]] = {}
    for split in sorted({t.split for t in trials}):
        mine = [t for t in trials if t.split == split]
        groups: dict[str, Figures] = {"overall": figures(mine)}
        for key in ("voice", "noise", "mode", "category"):
            for value in sorted({getattr(t, key) for t in mine}):
                groups[f"{key}={value}"] = figures([t for t in mine if getattr(t, key) == value])
        out[split] = groups
    return out
