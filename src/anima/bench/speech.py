"""``anima bench speech``: TTS latency and speed, lip-sync offset, sway cost, stop, end timing.

* per engine: time to first audio and real-time factor (synthesis time / audio time);
* sway: the cost of one 50 ms hop;
* on the real 100 Hz engine with the null sink (real-time playback clock):
  ``end_speak`` lateness after the last sample, stop latency (stop → mouth back at rest),
  and the A/V offset (lag of mouth opening against the audio envelope, cross-correlation).
"""

from __future__ import annotations

import threading
import time
import timeit
from dataclasses import dataclass, field

import numpy as np

from anima.body import load_body
from anima.clock import MonotonicClock
from anima.config import SpeechConfig
from anima.drivers.sim import SimDriver
from anima.events import Event, EventHub, SpeechEnded
from anima.motion.engine import MotionEngine
from anima.speech import load_engines
from anima.speech.base import Cancel, TTSEngine
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
