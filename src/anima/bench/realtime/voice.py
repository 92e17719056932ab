"""The voice side of ``anima bench realtime``: a realtime model's voice through the speech
service (:mod:`anima.speech.stream`) on the real clock, the 100 Hz engine and the null sink.

* first sample: ``feed()`` of a stream's first delta → its first sample written to the sink,
  where the null sink's playback starts (target ≤ 60 ms);
* lips against the audio: the lag of the mouth's opening (the lip channel as sent, each tick)
  behind the envelope of the audio played, by cross-correlation (target within 40 ms);
* stop: what ``stop()`` returns against the sink's played samples of the stream, in ms, and
  how long the call takes.

The voice is 24 kHz PCM16 (OpenAI Realtime's), syllables of a 180 Hz voiced sound, fed in
deltas of ``delta_ms`` at ``speed`` × real time, as a model that makes audio faster than it
plays does.
"""

from __future__ import annotations

import math
import threading
import time
from dataclasses import dataclass, field

import numpy as np

from anima.bench.speech.speech import _av_offset_ms
from anima.body import load_body
from anima.clock import Clock, MonotonicClock
from anima.commands import OpenVoiceStream, VoiceStream
from anima.drivers.sim import SimDriver
from anima.events import EventHub
from anima.motion.engine import MotionEngine
from anima.speech.base import Samples
from anima.speech.service import SpeechService
from anima.speech.sinks import NullSink
from anima.speech.stream import STREAM_RATE
from anima.testing.tts import ScriptedEngine

RATE = 24000  # Hz, the model's audio
WAIT_S = 10.0  # a trial that has not played by then is a failure, not a figure


@dataclass(kw_only=True)
class VoiceFigures:
    delta_ms: int  # the size of each delta fed
    first_sample_ms: list[float] = field(default_factory=list)  # per trial
    av_offset_ms: list[float] = field(default_factory=list)  # > 0: the mouth lags the sound
    stop_error_ms: list[float] = field(default_factory=list)  # stop()'s value − the sink's
    stop_call_ms: list[float] = field(default_factory=list)  # how long stop() took
    underruns: int = 0  # trials whose sink ran dry mid-way (their lips are not measured)


class _FirstWrite:
    """The null sink, noting when the first samples of each utterance are written."""

    name = "null"

    def __init__(self, sink: NullSink, clock: Clock) -> None:
        self.sink = sink
        self._clock = clock
        self.first_at: float | None = None
        self.written_once = threading.Event()

    def start(self, sample_rate: int) -> None:
        self.first_at = None
        self.written_once.clear()
        self.sink.start(sample_rate)

    def write(self, samples: Samples) -> None:
        if self.first_at is None:
            self.first_at = self._clock.now()
        self.sink.write(samples)
        self.written_once.set()

    def played(self) -> int:
        return self.sink.played()

    def written(self) -> int:
        return self.sink.written()

    def stop(self) -> None:
        self.sink.stop()

    def close(self) -> None:
        self.sink.close()


def voice(seconds: float, rate: int = RATE) -> bytes:
    """Syllables: 180 ms of a voiced sound (180 Hz and its harmonics), 70 ms of silence."""
    t = np.arange(round(seconds * rate)) / rate
    sound = sum(np.sin(2 * math.pi * 180.0 * k * t) / k for k in (1, 2, 3))
    on = (t % 0.25) < 0.18
    return (6000.0 * sound * on).astype("<i2").tobytes()


def _feed(stream: VoiceStream, audio: bytes, delta_ms: int, speed: float, clock: Clock) -> float:
    """Feed ``audio`` in deltas, paced at ``speed`` × real time; when the first was fed (the
    clock's time as feed() was called)."""
    step = 2 * RATE * delta_ms // 1000
    t0 = time.perf_counter()
    first = clock.now()
    for k, i in enumerate(range(0, len(audio), step)):
        stream.feed(audio[i : i + step], RATE)
        delay = t0 + (k + 1) * delta_ms / 1000 / speed - time.perf_counter()
        if delay > 0:
            time.sleep(delay)
    return first


def run_voice_bench(
    trials: int = 5, *, delta_ms: int = 50, speed: float = 2.0, seconds: float = 2.0
) -> VoiceFigures:
    """``trials`` streams of ``seconds`` of voice each, then ``trials`` stopped mid-way."""
    clock = MonotonicClock()
    body = load_body()
    driver = SimDriver(history=50_000)
    driver.connect()
    hub = EventHub()
    motion = MotionEngine(body, driver, clock=clock, events=hub)
    null = NullSink(clock, keep=True)
    sink = _FirstWrite(null, clock)
    service = SpeechService([ScriptedEngine()], sink, motion, hub, clock)
    figures = VoiceFigures(delta_ms=delta_ms)
    lip = body.index("lip_open")
    hub.start()
    motion.start()
    service.start()
    try:
        for _ in range(trials):
            stream = service.open_stream(OpenVoiceStream(source="bench"))
            fed_at = _feed(stream, voice(seconds), delta_ms, speed, clock)
            stream.finish()
            if not sink.written_once.wait(WAIT_S) or sink.first_at is None:
                raise RuntimeError("a voice stream never reached the sink")
            figures.first_sample_ms.append((sink.first_at - fed_at) * 1e3)
            _wait_done(stream)
            if null._base_pos:  # playback restarted after an underrun: no one time origin
                figures.underruns += 1
            else:
                figures.av_offset_ms.append(_av_offset_ms(driver, null, lip))
        for k in range(trials):
            stream = service.open_stream(OpenVoiceStream(source="bench"))
            stream.feed(voice(seconds), RATE)
            sink.written_once.wait(WAIT_S)
            time.sleep(0.5 + 0.37 * k / max(1, trials))
            t = time.perf_counter()
            said = stream.stop()
            figures.stop_call_ms.append((time.perf_counter() - t) * 1e3)
            figures.stop_error_ms.append(said - null.played() * 1000 / STREAM_RATE)
            _wait_done(stream)
    finally:
        service.stop()
        motion.stop()
        hub.stop()
    return figures


def _wait_done(stream: VoiceStream) -> None:
    deadline = time.monotonic() + WAIT_S
    while not stream.done:
        if time.monotonic() > deadline:
            raise RuntimeError(f"voice stream {stream.utterance} did not end")
        time.sleep(0.005)
