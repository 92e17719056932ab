"""The yield's onset with the product's ears: how long after a word's first sound the duplex
rules pause the robot's voice (:mod:`anima.agent.realtime.duplex`: :data:`ONSET_FRAMES` frames in
a row that the VAD calls voiced or whose level stands over the room's floor).

The session bench's person is the scripted voice with an energy VAD (Silero hears that voice
late and with gaps); this part uses what a robot uses: ``listen.vad``'s VAD (Silero by default)
and the level beside it, on the Piper voice saying short commands, each placed at every 64
samples of a 32 ms frame (where a word starts inside a frame changes when its frames fill)
over a light noise (σ = 60, about −55 dBFS). A word's onset is its first sample over 300; the
figure is from there to the end of the frame that makes the run: the pause comes ~1 ms later
(the session bench's "voice onset → paused" beyond its frames). For each ear alone as well, to
show what each one brings.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray

from anima.agent.realtime.duplex import ONSET_FRAMES, VOICED
from anima.audio import FRAME_SAMPLES, SAMPLE_RATE, resample
from anima.listening.vad import EnergyVad, Vad, load_vad
from anima.speech.base import Cancel

if TYPE_CHECKING:
    from anima.speech.piper.piper import PiperEngine

PHRASES = (
    "stop", "Stop.", "Wait, stop please.", "Hello there, how are you today?",
    "No, that's enough.", "Hey!", "Shush.", "Can you stop?",
)  # fmt: skip
NOISE = 60.0  # σ of the room's noise, in samples
LEAD_FRAMES = 16  # of noise before each word: the level's floor settles
LOUD = 300  # a sample over this is the word's first sound


@dataclass(kw_only=True)
class OnsetFigures:
    vad: str  # listen.vad's, as loaded
    either_ms: list[float] = field(default_factory=list)  # the duplex rules' onset
    vad_ms: list[float] = field(default_factory=list)  # the VAD alone
    level_ms: list[float] = field(default_factory=list)  # the level alone
    missed: int = 0  # words the rules' onset never fired on


def run_onset_bench(vad_kind: str = "auto", phrases: tuple[str, ...] = PHRASES) -> OnsetFigures:
    from anima.speech.piper.piper import PiperEngine as Piper  # the bundled voice, loaded here

    engine = Piper()
    engine.load()
    vad = load_vad(vad_kind)
    figures = OnsetFigures(vad=vad.name)
    rng = np.random.default_rng(33)
    for text in phrases:
        word = _speech(engine, text)
        for shift in range(0, FRAME_SAMPLES, 64):
            lead = LEAD_FRAMES * FRAME_SAMPLES + shift
            noisy = np.concatenate([np.zeros(lead), word, np.zeros(10 * FRAME_SAMPLES)])
            noisy = noisy + rng.normal(0.0, NOISE, len(noisy))
            samples = np.clip(noisy, -32768, 32767).astype(np.int16)
            onset = lead + int(np.flatnonzero(np.abs(word) > LOUD)[0])
            runs = _runs(samples, vad, EnergyVad())
            for ms_list, end in zip(
                (figures.either_ms, figures.vad_ms, figures.level_ms), runs, strict=True
            ):
                if end is not None:
                    ms_list.append((end - onset) * 1000.0 / SAMPLE_RATE)
            figures.missed += runs[0] is None
    return figures


def _speech(engine: PiperEngine, text: str) -> NDArray[np.float64]:
    """``text`` in the Piper voice at 16 kHz."""
    chunks = list(engine.synthesize(text, "en-US", Cancel()))
    audio = np.concatenate([c.samples for c in chunks]).astype(np.int16)
    return resample(audio, chunks[0].sample_rate).astype(np.float64)


def _runs(
    samples: NDArray[np.int16], vad: Vad, level: EnergyVad
) -> tuple[int | None, int | None, int | None]:
    """The sample where each ear's run of ONSET_FRAMES ends: either, the VAD, the level."""
    vad.reset()
    ends: list[int | None] = [None, None, None]
    runs = [0, 0, 0]
    for k in range(len(samples) // FRAME_SAMPLES):
        frame = samples[k * FRAME_SAMPLES : (k + 1) * FRAME_SAMPLES]
        voiced = vad.probability(frame) >= VOICED
        loud = level.probability(frame) >= VOICED
        for i, heard in enumerate((voiced or loud, voiced, loud)):
            runs[i] = runs[i] + 1 if heard else 0
            if runs[i] == ONSET_FRAMES and ends[i] is None:
                ends[i] = (k + 1) * FRAME_SAMPLES
        if all(e is not None for e in ends):
            break
    return ends[0], ends[1], ends[2]
