"""``anima bench speech``: TTS latency and speed, lip-sync offset, sway cost, stop, end timing.

* per engine: time to first audio and real-time factor (synthesis time / audio time);
* sway: the cost of one 50 ms hop;
* on the real 100 Hz engine with the null sink (real-time playback clock):
  ``end_speak`` lateness after the last sample, stop latency (stop → mouth back at rest),
  and the A/V offset (lag of mouth opening against the audio envelope, cross-correlation);
* with ``--loop`` (:func:`run_starvation_bench`): the real 100 Hz loop, playing an animation,
  while each engine synthesizes long text as fast as it can (2,000 characters of sentences, and
  one 20,000-character clause given straight to the engine) and while voices load: the loop's
  missed deadlines and its largest gap between frames sent (target: 0 missed, no gap over two
  periods, 20 ms), with the same figures for the loop alone as the machine's floor, and
  beside pocketsphinx loading its language model and decoding 10 s of noise.
"""

from __future__ import annotations

import itertools
import threading
import time
import timeit
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import numpy as np

from anima.bench.scene import wave
from anima.body import load_body
from anima.clock import MonotonicClock
from anima.config import SpeechConfig
from anima.drivers.base import Frame
from anima.drivers.sim import SimDriver
from anima.events import Event, EventHub, SpeechEnded
from anima.motion.engine import MotionEngine
from anima.speech import close_engines, load_engines
from anima.speech.base import AudioChunk, Cancel, TTSEngine
from anima.speech.service import SpeechService
from anima.speech.sinks import NullSink
from anima.speech.sway import SwayGenerator

SENTENCE = "Hello, I am anima. I can talk, move my head, and look at you while we speak."


@dataclass(frozen=True, kw_only=True)
class EngineFigures:
    engine: str
    first_audio_ms: float
    audio_s: float
    synth_s: float
    real_time_factor: float


@dataclass(kw_only=True)
class SpeechBenchResult:
    engines: list[EngineFigures] = field(default_factory=list)
    sway_hop_us: float = 0.0
    service_engine: str = ""
    end_lateness_ms: list[float] = field(default_factory=list)  # per utterance
    stop_latency_ms: list[float] = field(default_factory=list)  # stop → mouth at rest
    av_offset_ms: float = 0.0  # > 0: the mouth lags the sound


def _engine_figures(engine: TTSEngine) -> EngineFigures:
    engine.load()
    list(engine.synthesize("warm up", "en-US", Cancel()))
    t0 = time.perf_counter()
    first = None
    samples = 0
    rate = 1
    for chunk in engine.synthesize(SENTENCE, "en-US", Cancel()):
        if first is None:
            first = time.perf_counter() - t0
        samples += len(chunk.samples)
        rate = chunk.sample_rate
    synth = time.perf_counter() - t0
    audio = samples / rate
    return EngineFigures(
        engine=engine.name,
        first_audio_ms=(first or 0.0) * 1e3,
        audio_s=audio,
        synth_s=synth,
        real_time_factor=synth / audio if audio else float("nan"),
    )


def _sway_hop_us() -> float:
    gen = SwayGenerator(22050)
    hop = (np.sin(np.arange(gen.hop) / 5.0) * 8000).astype(np.int16)
    n = 20000
    return min(timeit.repeat(lambda: gen.feed(hop), number=n, repeat=3)) / n * 1e6


class GilProbe:
    """A thread that wakes every millisecond and records its longest gap between wake-ups.

    Python threads run one at a time: the gap is how long this thread could not run, i.e. the
    longest time something held the interpreter (or the OS did not schedule it) — the same wait
    the motion loop would have had. A busy pure-Python thread alone gives gaps of ~5–10 ms here
    (the interpreter's 5 ms switch interval); a C call that keeps the GIL gives its whole length.
    Use it as a context manager around the work to measure; :attr:`worst_ms` is the result.
    """

    def __init__(self) -> None:
        self.worst_ms = 0.0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="anima-gil-probe", daemon=True)

    def _run(self) -> None:
        last = time.perf_counter()
        while not self._stop.is_set():
            time.sleep(0.001)
            now = time.perf_counter()
            self.worst_ms = max(self.worst_ms, (now - last) * 1e3)
            last = now

    def __enter__(self) -> GilProbe:
        self._thread.start()
        time.sleep(0.02)  # let it reach its loop: its start-up is not the work's gap
        self.worst_ms = 0.0
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(1.0)


class _Recorder:
    def __init__(self) -> None:
        self.ended: list[SpeechEnded] = []
        self.cond = threading.Condition()

    def __call__(self, e: Event) -> None:
        if isinstance(e, SpeechEnded):
            with self.cond:
                self.ended.append(e)
                self.cond.notify_all()

    def wait(self, n: int, timeout: float = 20.0) -> None:
        with self.cond:
            self.cond.wait_for(lambda: len(self.ended) >= n, timeout)


def run_speech_bench(utterances: int = 5, stops: int = 5) -> SpeechBenchResult:
    engines, _ = load_engines(SpeechConfig())
    result = SpeechBenchResult(
        engines=[_engine_figures(e) for e in engines], sway_hop_us=_sway_hop_us()
    )
    if not engines:
        return result
    result.service_engine = engines[0].name
    clock = MonotonicClock()
    body = load_body()
    driver = SimDriver(history=20000)
    driver.connect()
    hub = EventHub()
    rec = _Recorder()
    hub.subscribe(rec)
    motion = MotionEngine(body, driver, clock=clock, events=hub)
    sink = NullSink(clock, keep=True)
    service = SpeechService(engines[:1], sink, motion, hub, clock)
    hub.start()
    motion.start()
    service.start()
    lip = body.index("lip_open")
    rest = body.channels[lip].default
    try:
        for i in range(utterances):
            service.speak(SENTENCE if i == 0 else f"Sentence {i}, spoken to measure the end.")
            rec.wait(i + 1)
            # with a fast synthesizer playback never starves: the audio ends at this time
            audio_end = sink._base_time + (sink.written() - sink._base_pos) / sink._rate
            result.end_lateness_ms.append((rec.ended[-1].t - audio_end) * 1e3)
            if i == 0:
                result.av_offset_ms = _av_offset_ms(driver, sink, lip)
        for _ in range(stops):
            service.speak(SENTENCE)
            time.sleep(0.6)
            t_stop = clock.now()
            service.stop_speaking()
            time.sleep(0.2)
            closed = [
                f.t for f in driver.history() if f.t >= t_stop and abs(f.values[lip] - rest) < 1
            ]
            if closed:
                result.stop_latency_ms.append((closed[0] - t_stop) * 1e3)
    finally:
        service.stop()
        motion.stop()
        hub.stop()
    return result


def _av_offset_ms(driver: SimDriver, sink: NullSink, lip: int) -> float:
    """Lag of mouth opening behind the audio actually played (cross-correlation, refined)."""
    audio = np.concatenate(sink.kept).astype(float)
    rate = sink._rate
    start = sink._base_time
    frames = [f for f in driver.history() if start <= f.t <= start + len(audio) / rate]
    if len(frames) < 20:
        return float("nan")
    t = np.array([f.t for f in frames]) - start
    mouth = np.array([f.values[lip] for f in frames])
    win = int(0.02 * rate)
    pos = (t * rate).astype(int)
    env = np.array([np.sqrt(np.mean(audio[max(0, p - win) : p + win] ** 2)) for p in pos])
    m, e = mouth - mouth.mean(), env - env.mean()
    lags = np.arange(-10, 11)
    corr = np.array([np.dot(np.roll(m, -lag), e) for lag in lags])
    k = int(np.argmax(corr))
    frac = 0.0
    if 0 < k < len(lags) - 1:  # parabolic refinement between ticks
        a, b, c = corr[k - 1], corr[k], corr[k + 1]
        denom = a - 2 * b + c
        frac = 0.5 * (a - c) / denom if denom else 0.0
    return float((lags[k] + frac) * 10.0)


# ---------------------------------------------------------------- the loop while engines work

LONG_SENTENCES = (
    "The robot looks at you, waves its hand and smiles. It speaks slowly, about the weather, "
    "the time of day and what it has seen; then it waits for an answer. "
)
CLAUSE_WORDS = ("the", "robot", "looks", "at", "you", "and", "waves", "its", "hand", "while")


def long_text(chars: int) -> str:
    """Ordinary sentences, ``chars`` characters long."""
    return (LONG_SENTENCES * (chars // len(LONG_SENTENCES) + 1))[:chars]


def one_clause(chars: int) -> str:
    """One clause of ``chars`` characters: words and spaces, no punctuation at all."""
    return " ".join(itertools.islice(itertools.cycle(CLAUSE_WORDS), chars))[:chars]


class _TimedSim(SimDriver):
    """The sim driver, noting the real time of every frame sent (a frame's own ``t`` is its
    nominal deadline, which hides how late it really went out)."""

    def __init__(self) -> None:
        super().__init__(history=16)
        self.sent_at: list[float] = []

    def send(self, frame: Frame) -> Frame:
        self.sent_at.append(time.perf_counter())
        return super().send(frame)


@dataclass(frozen=True, kw_only=True)
class LoopUnderLoad:
    """The 100 Hz loop's health while one piece of work ran (``anima bench speech --loop``)."""

    work: str  # what ran beside the loop
    seconds: float  # how long it ran
    ticks: int
    missed: int  # deadlines the loop skipped
    max_gap_ms: float  # the largest gap between two frames sent (10 ms when all is well)
    first_audio_ms: float | None = None  # synthesis only: time to the first chunk
    audio_s: float | None = None  # synthesis only: audio produced before it stopped


def _under_loop(work: str, job: Callable[[], tuple[float | None, float | None]]) -> LoopUnderLoad:
    """Run ``job`` on this thread while the real 100 Hz loop plays an animation on its own."""
    body = load_body()
    driver = _TimedSim()
    driver.connect()
    motion = MotionEngine(body, driver, clock=MonotonicClock())
    motion.start()
    try:
        for _ in range(8):  # 24 s of arm and brow motion: longer than any job here
            motion.queue_move(wave(body))
        time.sleep(0.2)  # the loop is settled before the work begins
        before, k = motion.stats().missed, len(driver.sent_at)
        t0 = time.perf_counter()
        first, audio = job()
        seconds = time.perf_counter() - t0
        stats = motion.stats()
        sent = driver.sent_at[k - 1 :]
    finally:
        motion.stop()
        driver.disconnect()
    gaps = [b - a for a, b in itertools.pairwise(sent)]
    return LoopUnderLoad(
        work=work, seconds=seconds, ticks=len(sent) - 1, missed=stats.missed - before,
        max_gap_ms=max(gaps, default=0.0) * 1e3, first_audio_ms=first, audio_s=audio,
    )  # fmt: skip


def _synthesis(
    engine: TTSEngine, text: str, budget_s: float
) -> Callable[[], tuple[float | None, float | None]]:
    """Synthesize ``text`` as fast as the engine goes, for at most ``budget_s`` seconds."""

    def job() -> tuple[float | None, float | None]:
        cancel = Cancel()
        t0 = time.perf_counter()
        first: float | None = None
        samples, rate = 0, 1
        chunks: Iterator[AudioChunk] = engine.synthesize(text, "en-US", cancel)
        for chunk in chunks:
            if first is None:
                first = (time.perf_counter() - t0) * 1e3
            samples, rate = samples + len(chunk.samples), chunk.sample_rate
            if time.perf_counter() - t0 > budget_s:
                cancel.set()
        return first, samples / rate

    return job


def _idle(seconds: float) -> Callable[[], tuple[float | None, float | None]]:
    def job() -> tuple[float | None, float | None]:
        time.sleep(seconds)
        return None, None

    return job


def _loading(load: Callable[[], object]) -> Callable[[], tuple[float | None, float | None]]:
    def job() -> tuple[float | None, float | None]:
        load()
        return None, None

    return job


def run_starvation_bench(budget_s: float = 5.0) -> list[LoopUnderLoad]:
    """The loop beside each engine's loading and long syntheses, and beside nothing (the floor).

    Each synthesis runs at most ``budget_s`` seconds and is then cancelled (a 20,000-character
    clause is ~20 minutes of speech); ``first_audio_ms`` says how soon its audio began.
    """
    results = [_under_loop("nothing (the floor)", _idle(budget_s))]
    engines, _ = load_engines(SpeechConfig())
    try:
        for engine in engines:
            results.append(_under_loop(f"{engine.name}: load the voice", _loading(engine.load)))
            for label, text in (
                ("2,000 characters of sentences", long_text(2000)),
                ("one 20,000-character clause", one_clause(20_000)),
            ):
                job = _synthesis(engine, text, budget_s)
                results.append(_under_loop(f"{engine.name}: {label}", job))
    finally:
        close_engines(engines)  # Piper's worker process
    results.append(_under_loop("pocketsphinx (lm): load, 10 s of noise", _recognizing))
    return results


def _recognizing() -> tuple[float | None, float | None]:
    """Load the language-model recognizer and decode 10 s of noise in one buffer (its worst
    case: over a second of decoding, which held the GIL when it ran in this process)."""
    from anima.audio import SAMPLE_RATE
    from anima.listening.asr import PocketsphinxAsr

    noise = np.random.default_rng(7).standard_normal(10 * SAMPLE_RATE) * 3000
    asr = PocketsphinxAsr(mode="lm")
    try:
        asr.start()
        asr.feed(noise.astype(np.int16))
        asr.finish()
    finally:
        asr.close()
    return None, None
