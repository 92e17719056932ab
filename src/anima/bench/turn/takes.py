"""The turn-taking set: requests spoken by anima's own TTS, some with pauses inside them.

Each :class:`Request` is text with ``|`` where a speaker may pause ("walk forward | for two
seconds"). A *complete* take speaks it straight; a *paused* take inserts 0.5, 0.75 or 1.0 s of
silence at one of its ``|``. The pause is cut into the audio of the **whole sentence** (at the
first phoneme of the word after the ``|``, found by counting the phonemes of the words before
it), so the words before the pause keep the mid-sentence intonation a speaker who hesitates
keeps — synthesizing the two halves apart would end the first with a sentence-final fall.

:data:`DEV` is what the turn detector's rules and thresholds were tuned on; :data:`HELDOUT`
(other sentences, other pause points) is only measured. Noise is pink noise at a given
signal-to-noise ratio against the speech's own level, from a fixed seed.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from anima.audio import SAMPLE_RATE, resample
from anima.errors import AnimaError
from anima.speech.base import Cancel, PhonemeMark, TTSEngine

PAUSES_S = (0.5, 0.75, 1.0)  # pauses inside a sentence that must not end the turn
LEAD_S = 0.5  # silence before the speech
TRAIL_S = 1.6  # silence after it: room for the longest wait (1.2 s) and the VAD's lag
_FADE_S = 0.005  # ramps either side of a cut, so the cut itself makes no click
# pause symbols of both engines (eSpeak's "_", Piper's word spaces and punctuation)
_NOT_PHONEME = frozenset({"_", "^", "$", " ", ",", ".", "?", "!", ";", ":", "-", "(", ")", "'"})

DEV = (  # tuned on
    "walk forward | for two seconds",
    "look to your left and | then nod",
    "turn right | a little",
    "could you | wave at me",
    "nod twice | then smile",
    "say hello | to my friend",
    "look at me | and wave",
    "walk forward and | then turn left",
    "give me | a nod",
    "raise your arms | and then lower them",
    "look up | for a moment",
    "please turn your head | to the right",
    "wave",
    "stop",
    "what can you do",
    "look to your left",
    "nod",
    "look at me",
    "say hello",
    "walk forward",
)
HELDOUT = (  # measured only: never tuned on
    "wave to the people | on your left",
    "stand up and | walk a few steps",
    "look down | then look up",
    "can you | tell me your name",
    "smile | and say good morning",
    "turn around | slowly",
    "walk back | for three seconds",
    "shake your head | twice",
    "bow",
    "sit down",
    "what is your name",
    "turn left a little",
)


@dataclass(frozen=True)
class Voice:
    """A TTS voice of the set: a name, how to make its engine, and the locale it speaks."""

    name: str
    make: Callable[[], TTSEngine]
    locale: str = "en-US"


def _espeak(**options: int) -> Callable[[], TTSEngine]:
    def make() -> TTSEngine:
        from anima.speech.espeak.espeak import EspeakEngine

        return EspeakEngine(**options)

    return make


PIPER_SEED = 13  # Piper samples its prosody (VITS noise): seeded, its takes are the same each run


def _piper() -> TTSEngine:
    """Piper's voice, in this process, onnxruntime's random draws seeded: unseeded, the same
    sentences fell otherwise from process to process, and the half-duplex cues cut 33-41 of
    Piper's 184 takes (seeds 1, 7 and none, 2026-12-05)."""
    import onnxruntime

    from anima.speech.piper.piper import PiperEngine

    onnxruntime.set_seed(PIPER_SEED)
    return PiperEngine()


VOICES = (
    Voice("espeak-us", _espeak()),
    Voice("espeak-gb", _espeak(), "en-GB"),
    Voice("espeak-slow-high", _espeak(wpm=130, pitch=75)),
    Voice("piper-joe", _piper),
)


@dataclass(frozen=True, kw_only=True)
class Take:
    """One spoken request, ready to be fed to a speech detector."""

    text: str  # the words, without the pause marks
    voice: str
    split: str  # dev | heldout
    pause_s: float  # the silence inserted inside the sentence (0: a complete take)
    noise_db: float | None  # signal-to-noise ratio of the added noise (None: clean)
    audio: NDArray[np.int16]  # 16 kHz: LEAD_S, the speech, TRAIL_S
    segments: tuple[tuple[str, int], ...]  # (words so far, sample where they end) per piece
    speech_end: int  # the last loud sample of the speech (where the turn really ends)

    @property
    def label(self) -> str:
        pause = f" ({self.pause_s:g} s pause)" if self.pause_s else ""
        noise = f", {self.noise_db:g} dB SNR" if self.noise_db is not None else ""
        return f"{self.voice}: {self.text!r}{pause}{noise}"


def pieces(request: str) -> list[str]:
    """The words of ``request`` between its pause marks."""
    return [p.strip() for p in request.split("|") if p.strip()]


def _phonemes(marks: list[PhonemeMark]) -> list[PhonemeMark]:
    return [m for m in marks if m.phoneme not in _NOT_PHONEME]


def _strip(phoneme: str) -> str:
    return phoneme.lstrip("ˈˌ")


@functools.cache
def _spoken(voice: Voice, text: str) -> tuple[NDArray[np.int16], int, tuple[PhonemeMark, ...]]:
    """``text`` spoken by ``voice`` at the engine's rate, with its phoneme marks (cached)."""
    engine = _engine(voice)
    chunks = list(engine.synthesize(text, voice.locale, Cancel()))
    if not chunks:
        raise AnimaError(f"turn set: {voice.name} said nothing for {text!r}")
    samples = np.concatenate([c.samples for c in chunks]).astype(np.int16)
    return samples, chunks[0].sample_rate, tuple(m for c in chunks for m in c.phonemes)


@functools.cache
def _engine(voice: Voice) -> TTSEngine:
    engine = voice.make()
    engine.load()
    return engine


def cut_points(voice: Voice, request: str) -> tuple[NDArray[np.int16], int, list[int]]:
    """The whole sentence's samples, rate, and the sample of each pause mark's next word."""
    parts = pieces(request)
    samples, rate, marks = _spoken(voice, " ".join(parts))
    full = _phonemes(list(marks))
    cuts = []
    for k in range(1, len(parts)):
        head = _phonemes(list(_spoken(voice, " ".join(parts[:k]))[2]))
        n = len(head)
        if n >= len(full) or [_strip(m.phoneme) for m in head] != [
            _strip(m.phoneme) for m in full[:n]
        ]:
            raise AnimaError(
                f"turn set: {voice.name} phonemizes {' '.join(parts[:k])!r} differently inside "
                f"{request!r}: cannot place the pause"
            )
        cuts.append(full[n].offset)
    return samples, rate, cuts


def _faded(samples: NDArray[np.float64], rate: int, head: bool, tail: bool) -> None:
    n = min(len(samples) // 2, max(1, round(_FADE_S * rate)))
    ramp = np.linspace(0.0, 1.0, n)
    if head:
        samples[:n] *= ramp
    if tail:
        samples[-n:] *= ramp[::-1]


def pink_noise(n: int, seed: int) -> NDArray[np.float64]:
    """``n`` samples of unit-RMS pink (1/f) noise."""
    rng = np.random.default_rng(seed)
    spectrum = np.fft.rfft(rng.standard_normal(n))
    spectrum[1:] /= np.sqrt(np.arange(1, len(spectrum)))
    spectrum[0] = 0
    noise = np.fft.irfft(spectrum, n)
    rms = float(np.sqrt(np.mean(noise**2)))
    return noise / rms if rms > 0 else noise


@functools.cache
def _sentence(voice: Voice, request: str) -> tuple[NDArray[np.float64], tuple[int, ...]]:
    """The whole sentence at 16 kHz and its pause points there (resampled once: it is most of
    a take's cost)."""
    samples, rate, cuts = cut_points(voice, request)
    audio = resample(samples, rate).astype(np.float64)
    return audio, tuple(round(c * SAMPLE_RATE / rate) for c in cuts)


def take(
    voice: Voice,
    request: str,
    *,
    split: str,
    pause_s: float = 0.0,
    pause_at: int = 0,
    noise_db: float | None = None,
    seed: int = 13,
) -> Take:
    """``request`` spoken by ``voice``, with ``pause_s`` inserted at pause mark ``pause_at``."""
    sentence, cuts = _sentence(voice, request)
    parts = pieces(request)
    bounds = [0, *cuts, len(sentence)]
    audio: list[NDArray[np.float64]] = [np.zeros(round(LEAD_S * SAMPLE_RATE))]
    segments: list[tuple[str, int]] = []
    length = len(audio[0])
    for k in range(len(parts)):
        piece = sentence[bounds[k] : bounds[k + 1]].copy()
        paused = bool(pause_s) and k == pause_at
        _faded(piece, SAMPLE_RATE, head=bool(pause_s) and k == pause_at + 1, tail=paused)
        audio.append(piece)
        length += len(piece)
        segments.append((" ".join(parts[: k + 1]), length))
        if paused:
            audio.append(np.zeros(round(pause_s * SAMPLE_RATE)))
            length += len(audio[-1])
    audio.append(np.zeros(round(TRAIL_S * SAMPLE_RATE)))
    speech = np.concatenate(audio)
    loud = np.flatnonzero(np.abs(speech) > 0.02 * np.abs(speech).max())
    if noise_db is not None:
        level = float(np.sqrt(np.mean(speech[loud[0] : loud[-1]] ** 2)))
        speech = speech + pink_noise(len(speech), seed) * level * 10 ** (-noise_db / 20)
    return Take(
        text=" ".join(parts),
        voice=voice.name,
        split=split,
        pause_s=pause_s,
        noise_db=noise_db,
        audio=np.clip(np.round(speech), -32768, 32767).astype(np.int16),
        segments=tuple(segments),
        speech_end=int(loud[-1]) + 1,
    )


def iter_takes(
    voices: tuple[Voice, ...] = VOICES,
    *,
    split: str = "dev",
    pauses: tuple[float, ...] = PAUSES_S,
    noises: tuple[float | None, ...] = (None, 20.0),
) -> Iterator[Take]:
    """Every take of ``split``, made as it is asked for, request by request with the voices
    taking turns (a run cut short by a time budget has measured every voice alike)."""
    requests = {"dev": DEV, "heldout": HELDOUT}[split]
    for i, request in enumerate(requests):
        marks = len(pieces(request)) - 1
        for noise in noises:
            seed = 1000 * i + 7
            for voice in voices:
                yield take(voice, request, split=split, noise_db=noise, seed=seed)
            for j, pause in enumerate(pauses if marks else ()):
                at = j % marks  # with several marks, the pauses take turns at them
                for voice in voices:
                    yield take(
                        voice, request, split=split, pause_s=pause, pause_at=at,
                        noise_db=noise, seed=seed + j + 1,
                    )  # fmt: skip


def takes(
    voices: tuple[Voice, ...] = VOICES,
    *,
    split: str = "dev",
    pauses: tuple[float, ...] = PAUSES_S,
    noises: tuple[float | None, ...] = (None, 20.0),
) -> list[Take]:
    """Every take of ``split``: each request straight, and each paused one at each pause."""
    return list(iter_takes(voices, split=split, pauses=pauses, noises=noises))
