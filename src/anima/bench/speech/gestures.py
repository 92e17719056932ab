"""`anima bench gestures`: how close to its word a gesture of annotated speech starts.

Each trial speaks a sentence with ``^start(nod)`` before one of its words, on the real 100 Hz
loop with the null sink and the real engine (Piper, eSpeak NG). The word's audio onset is the
engine's own word mark, moved by the leading silence the service drops, placed on the sink's
playback clock (the null sink plays in real time from its first write; synthesis is far faster
than real time, so playback never starves). The gesture's start is the ``move_started`` of the
first move it queued (the reset to the default posture, or the gesture itself), at that tick's
nominal time. Lateness = start − onset: within one tick (0–10 ms) is the target.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field

from anima.animation.library import AnimationLibrary, shipped_folder
from anima.behaviour.controller import Behaviour
from anima.behaviour.speech_gestures import BehaviourGestures
from anima.body import load_body
from anima.clock import MonotonicClock
from anima.drivers.sim import SimDriver
from anima.events import Event, EventHub, MoveStarted, SpeechEnded
from anima.language.markup import parse
from anima.motion.engine import MotionEngine
from anima.speech.base import AudioChunk, Cancel, TTSEngine
from anima.speech.service import SpeechService
from anima.speech.sinks import NullSink
from anima.speech.utterance import leading_silence

SENTENCES = (
    "Hello there ^start(nod) my friend, how are you today?",
    "I think ^start(nod) that is a very good idea.",
    "Welcome to the lab. ^start(nod) We are glad you came.",
    "It is 2024, ^start(nod) and the robots are talking.",
    "Let me see. ^start(nod) Yes, I can do that for you.",
    "The weather is lovely today, ^start(nod) isn't it?",
    "Could you please ^start(nod) say that once more?",
    "Thank you very much for ^start(nod) your patience.",
)


@dataclass
class GestureFigures:
    engine: str
    lateness_ms: list[float] = field(default_factory=list)
    missed_deadlines: int = 0
    ticks: int = 0


class _Recording:
    """An engine, recording the word marks and first chunk of what it synthesizes."""

    def __init__(self, engine: TTSEngine) -> None:
        self.engine = engine
        self.name = engine.name
        self.chunks: list[AudioChunk] = []

    def load(self) -> None:
        self.engine.load()

    def supports(self, locale: str) -> bool:
        return self.engine.supports(locale)

    def synthesize(self, text: str, locale: str, cancel: Cancel) -> Iterator[AudioChunk]:
        self.chunks = []
        for chunk in self.engine.synthesize(text, locale, cancel):
            self.chunks.append(chunk)
            yield chunk


def run_gesture_bench(
    engine: TTSEngine, rounds: int = 2, sentences: int = len(SENTENCES)
) -> GestureFigures:
    figures = GestureFigures(engine=engine.name)
    recording = _Recording(engine)
    clock = MonotonicClock()
    body = load_body()
    driver = SimDriver(history=1000)
    driver.connect()
    hub = EventHub()
    started: list[MoveStarted] = []
    ended = threading.Event()

    def seen(event: Event) -> None:
        if isinstance(event, MoveStarted):
            started.append(event)
        elif isinstance(event, SpeechEnded):
            ended.set()

    hub.subscribe(seen, MoveStarted.kind, SpeechEnded.kind)
    motion = MotionEngine(body, driver, clock=clock, events=hub)
    library = AnimationLibrary([shipped_folder()], len(body))
    library.load()
    behaviour = Behaviour(motion, library, hub, clock)
    sink = NullSink(clock)
    service = SpeechService(
        [recording],
        sink,
        motion,
        hub,
        clock,
        gestures=BehaviourGestures(behaviour, hub),
        gesture_mode="disabled",
    )
    hub.start()
    motion.start()
    service.start()
    try:
        first_tick = motion.stats().ticks
        for _ in range(rounds):
            for sentence in SENTENCES[:sentences]:
                figures.lateness_ms.append(
                    _trial(
                        service,
                        recording=recording,
                        sink=sink,
                        started=started,
                        ended=ended,
                        sentence=sentence,
                    )
                )
                motion.wait_until_idle(10)
        errors = motion.period_errors_since(first_tick)
        figures.ticks = len(errors)
        figures.missed_deadlines = int((errors > motion.period).sum())
    finally:
        service.stop()
        motion.stop()
        hub.stop()
    return figures


def _trial(
    service: SpeechService,
    *,
    recording: _Recording,
    sink: NullSink,
    started: list[MoveStarted],
    ended: threading.Event,
    sentence: str,
) -> float:
    script = parse(sentence)
    segment = script.segments[0]
    cue = segment.cues[0]
    ended.clear()
    before = len(started)
    service.speak(sentence)
    if not ended.wait(30):
        raise TimeoutError(f"no end_speak for {sentence!r}")
    time.sleep(0.05)  # the move_started of the last tick reaches the hub
    chunks = recording.chunks
    trim = leading_silence(chunks[0])
    words = [w for c in chunks for w in c.words]
    onset = next(w.offset for w in words if w.char >= cue.char) - trim
    onset_t = sink._base_time + (onset - sink._base_pos) / sink._rate
    if len(started) <= before:
        raise RuntimeError(f"the gesture of {sentence!r} never started")
    return (started[before].t - onset_t) * 1e3
