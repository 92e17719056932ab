"""The wake phrase: hit rate over voices, speeds and noise, and false wakes per hour of talk.

Everything is spoken by anima's own engines at run time (nothing is recorded or downloaded):
eSpeak NG en-US and en-GB at several rates and pitches, and Piper's joe voice at three speeds
(the audio resampled: slower is lower). Noise is mixed at a signal-to-noise ratio: white, and a
low "fan" rumble (brown noise). A **hit** is one wake within the spoken utterance ("hey robot",
alone or with a command after it) fed to the spotter between stretches of silence.

**False wakes** are counted on a conversation that never says the phrase (:data:`HELDOUT_TALK`,
everyday sentences, some about robots or their commands, a few that sound like the phrase; none
was used to fit the spotter's model), each sentence once per voice with pauses between them; the
figure is per hour of that audio. **Near misses** ("hey Robert", "a robot", "hey rowboat", "hey
Rob, ...") are counted apart: how many of them woke it.

``run_wake_bench(max_s=...)`` stops starting new cases after ``max_s`` seconds of wall time and
reports what it measured (its cases are in a fixed order, so a bound cuts the same tail).
"""

from __future__ import annotations

import itertools
import resource
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

from anima.audio import FRAME_SAMPLES, SAMPLE_RATE, resample
from anima.listening.wake.spotter import Spotter
from anima.speech.base import Cancel, TTSEngine

Samples = NDArray[np.int16]

WAKE_TEXTS = ("hey robot", "hey robot, wave", "hey robot, look to your left", "Hey robot!")
# never contain the phrase: what people say near a robot, and what sounds like the phrase
NEAR_MISSES = (
    "hey Robert, how are you?", "a robot is standing in the hall.", "hey rowboat.",
    "hey Rob, it's time.", "hey, Roberta.", "he robbed a bank.", "they row boats.",
    "hey bobby, come here.", "the robot waved at me.", "hey there.", "hey, wait for me.",
    "okay Rover.", "hey Ruby, bring the box.", "I bought a robot for my son.",
)  # fmt: skip
CONVERSATION = (
    "Good morning, how did you sleep?", "Could you pass me the salt please?",
    "The meeting starts at ten, don't be late.", "I think it will rain this afternoon.",
    "Did you see the game last night?", "Let's go for a walk after lunch.",
    "My brother is coming to visit on Sunday.", "Turn left at the next corner.",
    "This coffee is too hot to drink.", "Where did I put my keys?",
    "The robot in the lab needs new batteries.", "Please wave to the camera.",
    "Can you look at me when I talk to you?", "Nod if you understand.",
    "Tell me a story about a dragon.", "What time is it in Tokyo?",
    "We should buy some bread and milk.", "I love the sound of the ocean.",
)  # fmt: skip
# never used to fit the spotter's model (CONVERSATION and NEAR_MISSES were): the default talk,
# ordinary sentences and a few written to sound like the phrase ("Hey, rope it to the post")
HELDOUT_TALK = (
    "I left my umbrella on the train this morning.", "Do you want tea or coffee?",
    "The kids are playing football in the garden.", "Can we move the meeting to Thursday?",
    "My phone battery is almost dead.", "There is a robotics fair downtown next week.",
    "He programmed the robot arm to pick up cups.", "Hey, did you hear that noise?",
    "Robots can't climb stairs very well.", "Hey everyone, dinner is ready.",
    "Turn the music down a little.", "Look, the cat is sleeping on the sofa again.",
    "We need to wave goodbye to grandma.", "Could you nod at the camera for the photo?",
    "A robust plan needs a backup.", "Hey Bob, have you seen Robin?",
    "Rowing a boat is hard work.", "Hey, rope it to the post.",
    "The library opens at nine.", "Say hello to your sister for me.",
)  # fmt: skip


@dataclass(frozen=True)
class Voice:
    name: str
    engine: TTSEngine
    locale: str = "en-US"
    speed: float = 1.0  # >1: faster (the audio resampled); eSpeak's own rate is in the engine


def espeak_voices() -> list[Voice]:
    """eSpeak NG variants: en-US and en-GB, rates 120-220 words per minute, pitch 20-80."""
    from anima.speech.espeak.espeak import EspeakEngine

    settings = [(165, 50), (120, 50), (220, 50), (165, 20), (165, 80), (190, 65)]
    return [
        Voice(f"espeak-{loc.lower()}-{wpm}wpm-p{pitch}", EspeakEngine(wpm=wpm, pitch=pitch), loc)
        for loc in ("en-US", "en-GB")
        for wpm, pitch in settings
    ]


def piper_voices() -> list[Voice]:
    """Piper's joe at 0.85×, 1× and 1.2× speed (empty when Piper is not installed)."""
    from anima.errors import AnimaError
    from anima.speech.piper.piper import PiperEngine

    engine = PiperEngine()
    try:
        engine.load()
    except AnimaError:
        return []
    return [Voice(f"piper-joe-{s:g}x", engine, speed=s) for s in (1.0, 0.85, 1.2)]


def speak(voice: Voice, text: str) -> Samples:
    """``text`` spoken by ``voice`` at 16 kHz."""
    chunks = list(voice.engine.synthesize(text, voice.locale, Cancel()))
    samples = np.concatenate([c.samples for c in chunks])
    return resample(samples, round(chunks[0].sample_rate * voice.speed))


def add_noise(samples: Samples, kind: str, snr_db: float, seed: int = 0) -> Samples:
    """``samples`` with ``kind`` noise (``white`` or ``fan``) at ``snr_db`` below the speech."""
    rng = np.random.default_rng(seed)
    noise = rng.standard_normal(len(samples))
    if kind == "fan":  # brown noise: most of its power below a few hundred hertz
        noise = np.cumsum(noise)
        noise -= np.convolve(noise, np.ones(801) / 801, mode="same")
    speech = samples.astype(np.float64)
    loud = speech[np.abs(speech) > 300]
    power = float(np.mean(loud**2)) if len(loud) else 1.0
    noise *= np.sqrt(power / 10 ** (snr_db / 10) / max(float(np.mean(noise**2)), 1e-12))
    return np.clip(speech + noise, -32768, 32767).astype(np.int16)


NOISES: tuple[tuple[str, float], ...] = (("clean", 0.0), ("white", 20.0), ("fan", 10.0))


def count_wakes(spotter: Spotter, audio: Samples) -> int:
    """Wakes the spotter reports over ``audio`` (frame by frame, from position 0)."""
    spotter.reset()
    usable = len(audio) - len(audio) % FRAME_SAMPLES
    hits = 0
    for begin in range(0, usable, FRAME_SAMPLES):
        if spotter.feed(audio[begin : begin + FRAME_SAMPLES], begin) is not None:
            hits += 1
    spotter.reset()
    return hits


def padded(samples: Samples, before_s: float, after_s: float, noise: tuple[str, float]) -> Samples:
    audio = np.concatenate([
        np.zeros(round(before_s * SAMPLE_RATE), np.int16), samples,
        np.zeros(round(after_s * SAMPLE_RATE), np.int16),
    ])  # fmt: skip
    kind, snr = noise
    return audio if kind == "clean" else add_noise(audio, kind, snr, seed=len(samples))


@dataclass
class WakeBenchResult:
    spotter: str
    hits: dict[str, list[int]] = field(default_factory=dict)  # per voice: [hits, tries]
    per_noise: dict[str, list[int]] = field(default_factory=dict)
    misses: list[str] = field(default_factory=list)  # "voice / noise / text"
    false_wakes: int = 0  # in the conversation
    false_heard: list[str] = field(default_factory=list)  # what woke it
    near_misses: list[int] = field(default_factory=lambda: [0, 0])  # [woke, said]
    talk_s: float = 0.0  # seconds of non-wake audio listened to
    cpu_s: float = 0.0  # process CPU time (all threads) of the spotter listening to the talk
    wall_s: float = 0.0
    cut_short: bool = False  # max_s ended the run before every case ran

    @property
    def hit_rate(self) -> float:
        hits = sum(h for h, _ in self.hits.values())
        tries = sum(t for _, t in self.hits.values())
        return hits / tries if tries else 0.0

    @property
    def false_per_hour(self) -> float:
        return self.false_wakes * 3600 / self.talk_s if self.talk_s else 0.0

    def lines(self) -> list[str]:
        tries = sum(t for _, t in self.hits.values())
        cpu_per_min = self.cpu_s / max(self.talk_s, 1e-9) * 60
        out = [
            f"wake spotter {self.spotter}: {self.hit_rate:.1%} hits over {tries} utterances; "
            f"{self.false_wakes} false wakes in {self.talk_s / 60:.1f} min of conversation "
            f"({self.false_per_hour:.1f}/h); near misses woke it {self.near_misses[0]} of "
            f"{self.near_misses[1]}; CPU {cpu_per_min:.1f} s per minute of talk; "
            f"{self.wall_s:.0f} s" + (" (cut short by max_s)" if self.cut_short else "")
        ]
        out += [f"  {n:<28} {h}/{t}" for n, (h, t) in self.hits.items()]
        out += [f"  noise {n:<22} {h}/{t}" for n, (h, t) in self.per_noise.items()]
        out += [f"  missed: {m}" for m in self.misses[:20]]
        out += [f"  false wake: {f}" for f in self.false_heard[:20]]
        return out


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def run_wake_bench(
    spotter: Spotter,
    *,
    voices: Sequence[Voice] | None = None,
    texts: Sequence[str] = WAKE_TEXTS,
    noises: Sequence[tuple[str, float]] = NOISES,
    talk: Sequence[str] = HELDOUT_TALK,
    near: Sequence[str] = NEAR_MISSES,
    max_s: float = 170.0,
) -> WakeBenchResult:
    """Hit rate over ``voices`` × ``texts`` × ``noises``, then false wakes over ``talk`` and
    ``near`` spoken by each voice (clean and with the noises in turn); bounded by ``max_s`` of
    wall time: half for the hits, 30 % for the talk, the rest for the near misses."""
    voices = list(voices) if voices is not None else espeak_voices() + piper_voices()
    result = WakeBenchResult(spotter=spotter.name)
    spotter.load()
    started = time.monotonic()
    for voice, text, noise in _cases(voices, texts, noises):
        if time.monotonic() - started > max_s / 2:
            result.cut_short = True
            break
        audio = padded(speak(voice, text), 0.6, 1.2, noise)
        heard = count_wakes(spotter, audio)
        for table, key in ((result.hits, voice.name), (result.per_noise, noise[0])):
            table.setdefault(key, [0, 0])
            table[key][0] += heard >= 1
            table[key][1] += 1
        if heard < 1:
            result.misses.append(f"{voice.name} / {noise[0]} / {text}")
    for i, (voice, sentence) in enumerate(itertools.product(voices, talk)):
        if time.monotonic() - started > max_s * 0.8:
            result.cut_short = True
            break
        noise = noises[i % len(noises)]
        audio = padded(speak(voice, sentence), 0.4, 0.6 + 0.1 * (i % 5), noise)
        result.talk_s += len(audio) / SAMPLE_RATE
        cpu = _cpu()  # the spotter's share only: synthesis is not counted
        woke = count_wakes(spotter, audio)
        result.cpu_s += _cpu() - cpu
        if woke:
            result.false_wakes += 1
            result.false_heard.append(f"{voice.name} / {sentence}")
    for i, (voice, sentence) in enumerate(itertools.product(voices, near)):
        if time.monotonic() - started > max_s:
            result.cut_short = True
            break
        audio = padded(speak(voice, sentence), 0.4, 0.8, noises[i % len(noises)])
        woke = count_wakes(spotter, audio) > 0
        result.near_misses[0] += woke
        result.near_misses[1] += 1
        if woke:
            result.false_heard.append(f"near miss: {voice.name} / {sentence}")
    result.wall_s = time.monotonic() - started
    return result


def _cases(
    voices: Sequence[Voice], texts: Sequence[str], noises: Sequence[tuple[str, float]]
) -> Iterator[tuple[Voice, str, tuple[str, float]]]:
    """Every voice early (the order a cut keeps fair): noise, then text, then voice."""
    for noise in noises:
        for text in texts:
            for voice in voices:
                yield voice, text, noise


def main(max_s: float = 170.0, kind: str = "asr") -> None:
    """Print the figures for ``kind`` (``asr`` or ``keyphrase``)."""
    from anima.listening.wake.asr_spotter import AsrSpotter
    from anima.listening.wake.keyphrase import KeyphraseSpotter

    spotter: Spotter = AsrSpotter() if kind == "asr" else KeyphraseSpotter()
    try:
        for line in run_wake_bench(spotter, max_s=max_s).lines():
            print(line)
    finally:
        spotter.close()
