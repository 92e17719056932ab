"""How the ASR spotter's model (``whisper.reader.WEIGHTS``, ``BIAS``) was fitted, reproducibly.

The stretches the spotter reads are collected from :mod:`anima.bench.wake.wake`'s utterances — the
wake texts, :data:`~anima.bench.wake.wake.NEAR_MISSES` and
:data:`~anima.bench.wake.wake.CONVERSATION`, by every voice with the noises in turn — and each is
read four ways (:meth:`~anima.listening.whisper.reader.WhisperReader.score` with ``every=True``). A
stretch is a positive when it is the first of a wake utterance. A logistic regression (standardized
features, L2 0.01, full-batch gradient descent) is fitted on the **fit voices** (eSpeak NG en-US and
Piper at 1×) and judged, per utterance, on the others (en-GB, Piper 0.85× and 1.2×), which it never
saw. ``main()`` prints the weights to paste and the held-out figures; a run takes ~10 minutes on the
2-core machine (it is a tool, not a benchmark: ``max_s`` bounds it).
"""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from anima.audio import Frame
from anima.bench.wake.wake import (
    CONVERSATION,
    NEAR_MISSES,
    NOISES,
    WAKE_TEXTS,
    Voice,
    count_wakes,
    espeak_voices,
    padded,
    piper_voices,
    speak,
)
from anima.listening.wake.asr_spotter import AsrSpotter
from anima.listening.wake.spotter import WakeHit
from anima.listening.whisper.reader import PhraseScore, WhisperReader


@dataclass(frozen=True)
class Stretch:
    utterance: str  # "voice / noise / text"
    kind: str  # wake | near | talk
    positive: bool  # the first stretch of a wake utterance
    features: tuple[float, ...]


class _Collecting(AsrSpotter):
    """The spotter's own segmentation; each stretch's four readings are kept, none wakes."""

    def __init__(self, reader: WhisperReader) -> None:
        super().__init__(reader=reader)
        self.whisper = reader
        self.scores: list[PhraseScore] = []

    def _decide(self, samples: Frame, detected: int) -> WakeHit | None:
        clip = samples[: self.window].astype(np.float32) / 32768.0
        self.scores.append(self.whisper.score(clip, every=True))
        return None


def fit_voice(voice: Voice) -> bool:
    return "en-us" in voice.name or voice.name.endswith("-1x")


def collect(voices: Sequence[Voice], max_s: float) -> list[tuple[Voice, Stretch]]:
    spotter = _Collecting(WhisperReader("hey robot"))
    out: list[tuple[Voice, Stretch]] = []
    started = time.monotonic()
    cases = [(v, t, n, "wake") for n in NOISES for t in WAKE_TEXTS for v in voices]
    talk = [(v, t) for v in voices for t in (*NEAR_MISSES, *CONVERSATION)]
    cases += [(v, t, NOISES[i % len(NOISES)], "near" if t in NEAR_MISSES else "talk")
              for i, (v, t) in enumerate(talk)]  # fmt: skip
    for voice, text, noise, kind in cases:
        if time.monotonic() - started > max_s:
            break
        spotter.scores = []
        count_wakes(spotter, padded(speak(voice, text), 0.6, 1.2, noise))
        name = f"{voice.name} / {noise[0]} / {text}"
        for i, score in enumerate(spotter.scores):
            positive = kind == "wake" and i == 0
            out.append((voice, Stretch(name, kind, positive, score.features)))
    return out


def fit(x: NDArray[np.float64], y: NDArray[np.float64]) -> tuple[NDArray[np.float64], float]:
    """Logistic regression; the weights and bias on the raw features."""
    mu, sd = x.mean(0), x.std(0) + 1e-9
    z = np.c_[(x - mu) / sd, np.ones(len(x))]
    w = np.zeros(z.shape[1])
    for _ in range(3000):
        p = 1 / (1 + np.exp(-z @ w))
        w -= (z.T @ (p - y) / len(y) + 0.01 * np.r_[w[:-1], 0.0]) * 1.0
    return w[:-1] / sd, float(w[-1] - np.sum(w[:-1] * mu / sd))


def judged(stretches: Sequence[Stretch], weights: NDArray[np.float64], bias: float) -> str:
    woke: dict[str, bool] = defaultdict(bool)
    kinds: dict[str, str] = {}
    for s in stretches:
        p = 1 / (1 + np.exp(-(np.array(s.features) @ weights + bias)))
        woke[s.utterance] |= bool(p >= 0.5)
        kinds[s.utterance] = s.kind
    parts = []
    for kind in ("wake", "near", "talk"):
        names = [n for n in woke if kinds[n] == kind]
        parts.append(f"{kind} {sum(woke[n] for n in names)}/{len(names)}")
    return ", ".join(parts)


def main(max_s: float = 900.0) -> None:
    voices = espeak_voices() + piper_voices()
    rows = collect(voices, max_s)
    train = [s for v, s in rows if fit_voice(v) and len(s.features) == 8]
    held = [s for v, s in rows if not fit_voice(v) and len(s.features) == 8]
    x = np.array([s.features for s in train])
    y = np.array([float(s.positive) for s in train])
    weights, bias = fit(x, y)
    print("WEIGHTS =", tuple(round(float(w), 3) for w in weights), "BIAS =", round(bias, 3))
    print("fit voices:", judged(train, weights, bias))
    print("held-out voices:", judged(held, weights, bias))
