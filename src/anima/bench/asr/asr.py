"""``anima bench asr``: word error, confidence, latency and cost of the speech recognizers.

anima's own TTS speaks requests phrased as people say them ("give me a nod", "walk forward a
bit") in several voices — eSpeak NG en-us at 165 words per minute, eSpeak NG en (British) at 210
and a low pitch, Piper's joe — clean and mixed with white noise or babble (six other talkers) at
``noise_db`` relative to the speech. Each recognizer hears each recording through the
:class:`~anima.listening.asr.Recognizer` protocol. Figures:

- **word error** per recognizer, voice and condition (words lower-cased, punctuation dropped,
  digits spelled: "2" is "two");
- **confidence**: Whisper's, on the clean recordings and on noise or babble alone (no speech),
  which is what ``listen.min_confidence`` must separate;
- **final latency**: ~3 s requests fed frame by frame in real time, each followed by the
  silence the end of turn waits (``tail_s``); from the last frame fed to ``finish()``'s return;
- **load** time and the resident memory it added.

The run is bounded (``max_s``): what did not fit is left out and said so.
"""

from __future__ import annotations

import functools
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

from anima.audio import FRAME_S, SAMPLE_RATE, Frame, Framer, resample
from anima.bench.measure import percentile, rss_mb
from anima.errors import AnimaError
from anima.listening.asr import Recognizer
from anima.speech.base import Cancel, TTSEngine

REQUESTS = (
    "could you wave at me",
    "give me a nod",
    "look to your left",
    "nod twice then smile",
    "walk forward a bit",
    "what can you do",
    "make me a coffee",
    "turn right a little",
    "wave and say hello",
    "walk forward for two seconds",
    "what's your name",
    "look at me",
    "stop",
    "say hello to everyone in the room",
    "could you nod please",
    "hey robot",
)
# ~3 s each at eSpeak's default rate: the latency figure's utterances
LONG_REQUESTS = (
    "could you wave at me and then nod twice please",
    "please look to your left and then smile at me",
    "walk forward for two seconds and then stop there",
)
# what the babble talkers say (never a command)
CHATTER = (
    "the weather today is lovely and we went to the market to buy some bread",
    "my brother told me a long story about his holiday in the mountains last year",
    "please pass the salt and the pepper and tell me how your day was",
    "the train was late again so I read the whole newspaper on the platform",
    "we should paint the kitchen a brighter colour before the winter comes",
    "she practised the piano for an hour every evening after dinner",
)
CONDITIONS = ("clean", "white", "babble")
# whisper: as anima runs it (listen.asr_beam's default beam); whisper-greedy: a beam of 1
RECOGNIZERS = ("whisper", "whisper-greedy", "pocketsphinx-grammar", "pocketsphinx-lm")
_DIGITS = {"0": "zero", "1": "one", "2": "two", "3": "three", "4": "four", "5": "five"}


@dataclass(frozen=True)
class Voice:
    name: str
    engine: TTSEngine
    locale: str


def voices() -> list[Voice]:
    """The bench's voices that are installed (eSpeak NG always; Piper with the speech extra)."""
    from anima.speech.espeak.espeak import EspeakEngine
    from anima.speech.piper.piper import PiperEngine

    found = []
    for name, engine, locale in (
        ("espeak-en-us", EspeakEngine(), "en-US"),
        ("espeak-en-fast-low", EspeakEngine(wpm=210, pitch=30), "en-GB"),
        ("piper-joe", PiperEngine(), "en-US"),
    ):
        try:
            engine.load()
        except AnimaError:
            continue
        found.append(Voice(name, engine, locale))
    return found


def speak(voice: Voice, text: str) -> Frame:
    """``text`` spoken by ``voice`` at 16 kHz."""
    chunks = list(voice.engine.synthesize(text, voice.locale, Cancel()))
    return resample(np.concatenate([c.samples for c in chunks]), chunks[0].sample_rate)


def speech_rms(audio: Frame) -> float:
    """RMS of the samples that are speech (above 1 % of full scale): the level noise is set to."""
    x = audio.astype(np.float64)
    loud = x[np.abs(x) > 327]
    return float(np.sqrt(np.mean(loud**2))) if len(loud) else 0.0


def babble(talkers: Sequence[Frame], samples: int, rng: np.random.Generator) -> NDArray[np.float64]:
    """``samples`` of babble: every talker at a random offset, summed (looped where short)."""
    out = np.zeros(samples)
    for talker in talkers:
        looped = np.resize(talker.astype(np.float64), samples + len(talker))
        start = int(rng.integers(0, len(talker)))
        out += looped[start : start + samples]
    return out


def mix(speech: Frame, noise: NDArray[np.float64], db: float, *, lead_s: float = 0.5) -> Frame:
    """``speech`` with ``lead_s`` of noise before and after it, the noise ``db`` dB relative to
    the speech's RMS (``noise`` is looped or cut to fit)."""
    lead = round(lead_s * SAMPLE_RATE)
    padded = np.concatenate([np.zeros(lead), speech.astype(np.float64), np.zeros(lead)])
    n = np.resize(noise, len(padded))
    n_rms = float(np.sqrt(np.mean(n**2))) or 1.0
    out = padded + n / n_rms * speech_rms(speech) * 10 ** (db / 20)
    return np.clip(np.round(out), -32768, 32767).astype(np.int16)


def words(text: str) -> list[str]:
    """``text`` as the words word error is counted on."""
    return [_DIGITS.get(w, w) for w in re.findall(r"[a-z0-9']+", text.lower())]


def word_errors(reference: str, hypothesis: str) -> tuple[int, int]:
    """(substitutions + deletions + insertions, words in ``reference``)."""
    ref, hyp = words(reference), words(hypothesis)
    row = list(range(len(hyp) + 1))
    for i, r in enumerate(ref, 1):
        new = [i]
        for j, h in enumerate(hyp, 1):
            new.append(min(row[j] + 1, new[j - 1] + 1, row[j - 1] + (r != h)))
        row = new
    return row[-1], len(ref)


def recognize(recognizer: Recognizer, audio: Frame) -> str:
    """The final text of ``audio`` fed frame by frame, as fast as the recognizer takes it."""
    recognizer.start()
    framer = Framer()
    for frame in [*framer.feed(audio), *framer.flush()]:
        recognizer.feed(frame)
    return recognizer.finish()


@dataclass
class Cell:
    """Word error of one recognizer on one voice in one condition."""

    errors: int = 0
    words: int = 0
    misheard: list[tuple[str, str]] = field(default_factory=list)

    @property
    def wer(self) -> float:
        return self.errors / self.words if self.words else float("nan")


@dataclass
class AsrBenchResult:
    noise_db: float
    voices: list[str]
    wer: dict[str, dict[str, dict[str, Cell]]]  # recognizer → voice → condition
    load_s: dict[str, float]
    rss_added_mb: dict[str, float]
    latency_ms: dict[str, list[float]]  # recognizer → end of audio → final, per utterance
    reused: dict[str, int]  # recognizer → finals that were the pause's decode (Whisper)
    decode_ms: list[float]  # Whisper: one decode of each latency utterance (the machine's speed)
    utterance_s: float  # mean length of the latency utterances
    tail_s: float
    confidence_right: list[float]  # Whisper on requests it got right (clean or noisy)
    confidence_wrong: list[float]  # … on requests it got wrong
    confidence_noise: list[float]  # … on noise and babble alone
    skipped: list[str]  # what did not fit in max_s


def _recognizers(
    names: Sequence[str], requests: Sequence[str]
) -> dict[str, Callable[[], Recognizer]]:
    from anima.bench.asr.vocabulary import prompt_vocabulary, vocabulary
    from anima.listening.asr import PocketsphinxAsr
    from anima.listening.whisper.asr import WhisperAsr

    phrases = vocabulary()
    whisper = functools.partial(WhisperAsr, vocabulary=prompt_vocabulary(), wake_phrase="hey robot")
    makers: dict[str, Callable[[], Recognizer]] = {
        "whisper": whisper,
        "whisper-greedy": functools.partial(whisper, beam_size=1),
        # the grammar must hold the requests to hear them at all: its best case
        "pocketsphinx-grammar": lambda: PocketsphinxAsr(
            phrases=[*phrases, *requests], mode="grammar"
        ),
        "pocketsphinx-lm": lambda: PocketsphinxAsr(mode="lm"),
    }
    return {n: makers[n] for n in names}


def run_asr_bench(
    *,
    recognizers: Sequence[str] = RECOGNIZERS,
    requests: Sequence[str] = REQUESTS,
    voice_names: Sequence[str] | None = None,
    noise_db: float = -25.0,
    latency_trials: int = 6,
    tail_s: float = 0.3,
    max_s: float = 170.0,
    seed: int = 13,
) -> AsrBenchResult:
    """Measure (see the module docstring); stops adding work past ``max_s`` seconds (after the
    speech is made, each recognizer gets an equal share)."""
    began = time.monotonic()
    rng = np.random.default_rng(seed)
    found = [v for v in voices() if voice_names is None or v.name in voice_names]
    if not found:
        raise AnimaError(f"asr bench: none of the voices {voice_names} is installed")
    talkers = [speak(found[i % len(found)], t) for i, t in enumerate(CHATTER)]
    result = AsrBenchResult(
        noise_db=noise_db, voices=[v.name for v in found], wer={}, load_s={}, rss_added_mb={},
        latency_ms={}, reused={}, decode_ms=[], utterance_s=0.0, tail_s=tail_s, confidence_right=[],
        confidence_wrong=[], confidence_noise=[], skipped=[],
    )  # fmt: skip
    recordings: dict[tuple[str, str, str], Frame] = {}
    for v in found:
        for text in requests:
            clean = speak(v, text)
            recordings[v.name, "clean", text] = clean
            white = rng.standard_normal(len(clean) + SAMPLE_RATE)
            recordings[v.name, "white", text] = mix(clean, white, noise_db)
            noise = babble(talkers, len(clean) + SAMPLE_RATE, rng)
            recordings[v.name, "babble", text] = mix(clean, noise, noise_db)
    long_audio = [speak(found[i % len(found)], t) for i, t in enumerate(LONG_REQUESTS)]
    result.utterance_s = float(np.mean([len(a) for a in long_audio])) / SAMPLE_RATE
    from anima.listening.whisper.asr import WhisperAsr

    makers = _recognizers(recognizers, requests)
    each_s = (max_s - (time.monotonic() - began)) / max(1, len(makers))  # a share per recognizer
    for name, make in makers.items():
        began, max_s = time.monotonic(), each_s
        before = rss_mb()
        t0 = time.perf_counter()
        recognizer = make()
        recognizer.load()
        result.load_s[name] = time.perf_counter() - t0
        result.rss_added_mb[name] = rss_mb() - before
        try:
            # word error stops at 70 % of the share: the latency trials keep the rest
            _word_error(result, name, recognizer, recordings, began=began, max_s=0.7 * max_s)
            if name == "whisper":
                _confidence(result, recognizer, recordings, talkers, rng)
            result.latency_ms[name], result.reused[name] = _latency(
                recognizer, long_audio, trials=latency_trials, tail_s=tail_s, began=began,
                max_s=max_s, skipped=result.skipped,
            )  # fmt: skip
            if isinstance(recognizer, WhisperAsr):
                for audio in long_audio:
                    t0 = time.perf_counter()
                    recognizer.transcribe(audio)
                    result.decode_ms.append((time.perf_counter() - t0) * 1000)
        finally:
            recognizer.close()
    return result


def _word_error(
    result: AsrBenchResult,
    name: str,
    recognizer: Recognizer,
    recordings: dict[tuple[str, str, str], Frame],
    *,
    began: float,
    max_s: float,
) -> None:
    table = result.wer.setdefault(name, {})
    for (voice, condition, text), audio in recordings.items():
        if time.monotonic() - began > max_s:
            result.skipped.append(f"{name} on {voice} {condition} {text!r}")
            continue
        heard = recognize(recognizer, audio)
        cell = table.setdefault(voice, {}).setdefault(condition, Cell())
        errors, n = word_errors(text, heard)
        cell.errors += errors
        cell.words += n
        if errors:
            cell.misheard.append((text, heard))
        if name == "whisper":
            (result.confidence_wrong if errors else result.confidence_right).append(
                recognizer.confidence or 0.0
            )


def _confidence(
    result: AsrBenchResult,
    recognizer: Recognizer,
    recordings: dict[tuple[str, str, str], Frame],
    talkers: Sequence[Frame],
    rng: np.random.Generator,
) -> None:
    """Whisper's confidence on 2 s of noise or babble alone, as loud as the noisy requests'."""
    level = float(np.median([speech_rms(a) for a in recordings.values()]))
    for i in range(8):
        samples = 2 * SAMPLE_RATE
        noise = rng.standard_normal(samples) if i % 2 else babble(talkers, samples, rng)
        scaled = noise / float(np.sqrt(np.mean(noise**2))) * level * (0.1 if i < 4 else 1.0)
        recognize(recognizer, np.clip(scaled, -32768, 32767).astype(np.int16))
        result.confidence_noise.append(recognizer.confidence or 0.0)


def _latency(
    recognizer: Recognizer,
    utterances: Sequence[Frame],
    *,
    trials: int,
    tail_s: float,
    began: float,
    max_s: float,
    skipped: list[str],
) -> tuple[list[float], int]:
    """End of the fed audio → final text, each utterance fed in real time then ``tail_s``; and
    how many finals were a decode started before the end (Whisper's pause)."""
    from anima.listening.whisper.asr import WhisperAsr

    out, reused = [], 0
    for trial in range(trials):
        if time.monotonic() - began > max_s:
            skipped.append(f"{recognizer.name} latency trials {trial + 1}-{trials}")
            break
        audio = np.concatenate(
            [utterances[trial % len(utterances)], np.zeros(round(tail_s * SAMPLE_RATE), np.int16)]
        )
        framer = Framer()
        recognizer.start()
        start = time.monotonic()
        for n, frame in enumerate([*framer.feed(audio), *framer.flush()]):
            time.sleep(max(0.0, start + n * FRAME_S - time.monotonic()))  # a microphone's pace
            recognizer.feed(frame)
        t0 = time.perf_counter()
        recognizer.finish()
        out.append((time.perf_counter() - t0) * 1000)
        last = recognizer.last if isinstance(recognizer, WhisperAsr) else None
        reused += last is not None and last.samples < len(audio)
    return out, reused


def spread(values: Sequence[float]) -> str:
    """``p50 … ms, p95 … ms`` of ``values``."""
    return f"p50 {percentile(list(values), 50):.0f} ms, p95 {percentile(list(values), 95):.0f} ms"


def report_lines(r: AsrBenchResult) -> list[str]:
    """The figures as lines of text."""
    lines = [f"word error (noise {r.noise_db:g} dB re speech), voices: {', '.join(r.voices)}"]
    for name, by_voice in r.wer.items():
        for voice, by_condition in by_voice.items():
            cells = ", ".join(
                f"{c} {100 * cell.wer:.0f} %" for c, cell in by_condition.items() if cell.words
            )
            lines.append(f"  {name:21} {voice:19} {cells}")
    lines.append(
        f"final after the end of turn ({r.utterance_s:.1f} s requests, {r.tail_s:g} s tail):"
    )
    for name, values in r.latency_ms.items():
        reused = f", {r.reused[name]} the pause's decode" if name == "whisper" else ""
        lines.append(f"  {name:21} {spread(values)} (n={len(values)}{reused})")
    if r.decode_ms:
        lines.append(f"  (one whisper decode of such a request: {spread(r.decode_ms)})")
    lines.append("load and memory:")
    for name, seconds in r.load_s.items():
        lines.append(f"  {name:21} {seconds:.2f} s, +{r.rss_added_mb[name]:.0f} MB resident")
    if r.confidence_right or r.confidence_noise:

        def few(values: list[float]) -> str:
            if not values:
                return "none"
            return f"min {min(values):.2f}, p50 {percentile(values, 50):.2f}, max {max(values):.2f}"

        lines.append("whisper confidence:")
        lines.append(f"  requests heard right  {few(r.confidence_right)}")
        lines.append(f"  requests heard wrong  {few(r.confidence_wrong)}")
        lines.append(f"  noise or babble alone {few(r.confidence_noise)}")
    if r.skipped:
        lines.append(f"left out (past the time limit): {len(r.skipped)}: {r.skipped[0]} …")
    return lines
