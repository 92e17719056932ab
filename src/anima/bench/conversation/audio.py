"""The people of the conversation bench: voices that speak the requests, and the room's noise.

Nothing is recorded in the repository: every request is synthesized at run time by anima's own
engines, at 16 kHz. Voices (``VOICES``): eSpeak NG through libespeak-ng in three variants
(American at its default speed and pitch, British fast and high, American slow and low) and
Piper's joe. Noise (``NOISES``) is set relative to the speech it is mixed with (the active
speech's RMS): white at −25 dB, babble (four streams of reversed synthetic speech, so it sounds
like people but holds no words the recognizer could pick up) at −15 dB, and a fan (low-passed
noise with a mains hum and its harmonics) at −15 dB. The noise runs on between requests too, as
a room's would.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from anima.audio import SAMPLE_RATE, resample
from anima.errors import AnimaError
from anima.speech.base import Cancel, TTSEngine

Samples = NDArray[np.int16]
LOUD = 300  # |sample| above this counts as speech (where a request ends, its loudness)
_BABBLE_TEXT = (
    "The weather was fine on the way in this morning and the trains ran on time for once. "
    "We talked about the meeting, the new project and who would bring lunch on Friday."
)


@dataclass(frozen=True)
class Voice:
    """One speaker: an engine variant and the locale it speaks."""

    name: str
    make: Callable[[], TTSEngine]
    locale: str


def _espeak(wpm: int = 165, pitch: int = 50) -> Callable[[], TTSEngine]:
    def make() -> TTSEngine:
        from anima.speech.espeak.espeak import EspeakEngine

        return EspeakEngine(wpm=wpm, pitch=pitch)

    return make


def _piper() -> TTSEngine:
    from anima.speech.piper.piper import PiperEngine

    return PiperEngine()


VOICES: dict[str, Voice] = {
    v.name: v
    for v in (
        Voice("espeak-us", _espeak(), "en-US"),
        Voice("espeak-gb-fast", _espeak(wpm=200, pitch=70), "en-GB"),
        Voice("espeak-us-slow", _espeak(wpm=130, pitch=30), "en-US"),
        Voice("piper-joe", _piper, "en-US"),
    )
}
NOISES: dict[str, float | None] = {  # name → level in dB relative to the speech (None: clean)
    "clean": None,
    "white-25": -25.0,
    "babble-15": -15.0,
    "fan-15": -15.0,
}


class Speaker:
    """Loaded voices, each text synthesized once (16 kHz int16)."""

    def __init__(self) -> None:
        self._engines: dict[str, TTSEngine] = {}
        self._said: dict[tuple[str, str], Samples] = {}

    def engine(self, voice: str) -> TTSEngine:
        if voice not in self._engines:
            if voice not in VOICES:
                raise AnimaError(
                    f"conversation bench: unknown voice {voice!r} ({', '.join(VOICES)})"
                )
            engine = VOICES[voice].make()
            engine.load()  # an AnimaError naming the missing library
            self._engines[voice] = engine
        return self._engines[voice]

    def say(self, voice: str, text: str) -> Samples:
        key = (voice, text)
        if key not in self._said:
            chunks = list(self.engine(voice).synthesize(text, VOICES[voice].locale, Cancel()))
            if not chunks:
                raise AnimaError(f"conversation bench: {voice} said nothing for {text!r}")
            samples = np.concatenate([c.samples for c in chunks])
            self._said[key] = resample(samples, chunks[0].sample_rate)
        return self._said[key]


def speech_rms(samples: Samples) -> float:
    """RMS of the active speech (the samples louder than :data:`LOUD`)."""
    loud = samples[np.abs(samples) > LOUD].astype(np.float64)
    return float(np.sqrt(np.mean(loud**2))) if loud.size else 1000.0


def last_loud(samples: Samples) -> int:
    """Index just past the last loud sample: where the person stopped speaking."""
    loud = np.flatnonzero(np.abs(samples) > LOUD)
    return int(loud[-1]) + 1 if loud.size else 0


class Room:
    """A looping noise bed at a level set per request; ``take(n)`` gives the next samples."""

    def __init__(self, kind: str, speaker: Speaker, seconds: float = 20.0) -> None:
        if kind not in NOISES:
            raise AnimaError(f"conversation bench: unknown noise {kind!r} ({', '.join(NOISES)})")
        self.kind = kind
        self._db = NOISES[kind]
        self._bed = _bed(kind, speaker, round(seconds * SAMPLE_RATE))
        self._pos = 0
        self._gain = 0.0

    def level_for(self, speech: Samples) -> None:
        """Set the noise relative to this speech's loudness."""
        if self._db is not None:
            self._gain = speech_rms(speech) * 10 ** (self._db / 20)

    def take(self, n: int) -> NDArray[np.float64]:
        if self._db is None or n == 0:
            return np.zeros(n)
        idx = (self._pos + np.arange(n)) % len(self._bed)
        self._pos = (self._pos + n) % len(self._bed)
        return self._bed[idx] * self._gain

    def mix(self, speech: Samples) -> Samples:
        """``speech`` with the next stretch of noise added."""
        out = speech.astype(np.float64) + self.take(len(speech))
        return np.clip(out, -32768, 32767).astype(np.int16)

    def quiet(self, seconds: float) -> Samples:
        return self.mix(np.zeros(round(seconds * SAMPLE_RATE), dtype=np.int16))


def _bed(kind: str, speaker: Speaker, n: int) -> NDArray[np.float64]:
    """Unit-RMS noise of ``kind``, ``n`` samples (deterministic)."""
    rng = np.random.default_rng(13)
    if kind == "babble-15":
        bed = np.zeros(n)
        for k, voice in enumerate(("espeak-us", "espeak-gb-fast", "espeak-us-slow", "espeak-us")):
            talk = speaker.say(voice, _BABBLE_TEXT)[::-1].astype(np.float64)
            reps = np.tile(talk, n // len(talk) + 2)
            start = (k * len(talk)) // 4
            bed += reps[start : start + n] / max(speech_rms(talk.astype(np.int16)), 1.0)
    elif kind == "fan-15":
        white = rng.standard_normal(n)
        kernel = np.ones(24) / 24  # a moving average: most energy below ~600 Hz
        bed = np.convolve(white, kernel, mode="same")
        t = np.arange(n) / SAMPLE_RATE
        bed = bed / bed.std() + sum(0.5 / h * np.sin(2 * np.pi * 50 * h * t) for h in (1, 2, 3))
    else:
        bed = rng.standard_normal(n)
    return bed / (float(np.sqrt(np.mean(bed**2))) or 1.0)
