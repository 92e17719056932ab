"""``anima bench listen``: wake → recording, end of speech → final transcript, accuracy, cost.

anima's own TTS speaks the command phrases (Piper when installed, else eSpeak NG) into a
:class:`~anima.listening.sources.PushSource`; the real :class:`~anima.listening.Listener`
(pocketsphinx grammar, Silero VAD, keyphrase spotter) hears them. Each 32 ms frame is pushed and
waited for before the next, so the worker is idle when a frame arrives, as with a microphone, but
the run takes less than real time. Figures:

- **wake → recording started**: ``wake()`` called → recording-started callback (wall clock);
  for the spoken phrase, how far after the phrase's end the spotter reported it (audio time);
- **end of speech → final transcript**: from the last loud sample of the spoken command to the
  final transcript = the endpoint silence (audio, ``endpoint_silence_s``) + the time from the
  arrival of the frame that completes it to the final callback (wall clock);
- accuracy over the rounds, and the worker's time per frame while idle and while recording.
"""

from __future__ import annotations

import queue
import time
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from anima.audio import FRAME_SAMPLES, SAMPLE_RATE, Framer, resample
from anima.errors import AnimaError
from anima.listening import (
    ListenConfig,
    Listener,
    ListenResult,
    PushSource,
    RecordingStart,
    RoundReport,
)
from anima.listening.asr import normalize
from anima.speech.base import Cancel, TTSEngine

COMMANDS = ("wave", "nod", "look at me", "say hello", "walk forward", "stop")
_LOUD = 300  # |sample| above this counts as speech when finding where a command ends


@dataclass(frozen=True, kw_only=True)
class Spread:
    p50: float
    p99: float
    n: int


@dataclass(frozen=True, kw_only=True)
class ListenBenchResult:
    voice: str  # the TTS engine that spoke
    rounds: int  # commands spoken after a manual wake
    correct: int  # of those, transcribed exactly (case and punctuation aside)
    wake_to_recording_ms: Spread  # wake() → recording started (wall)
    spoken_wakes: int  # "hey robot, <command>" said
    spoken_wake_hits: int  # of those, heard by the spotter
    phrase_end_to_wake_ms: Spread | None  # the phrase's end → spotted (audio time)
    speech_end_to_final_ms: Spread  # the command's last sample → final transcript
    endpoint_silence_ms: float  # of which the configured silence (audio time)
    decide_ms: Spread  # the endpoint frame's arrival → final callback (wall)
    frame_idle_us: float  # worker time per frame while waiting for a wake (p50)
    frame_recording_us: float  # … while recording (spotter + VAD + ASR, p50)
    load_s: float  # start(): loading the models


def _spread(values: Sequence[float]) -> Spread:
    a = np.asarray(values, dtype=np.float64)
    if len(a) == 0:
        return Spread(p50=float("nan"), p99=float("nan"), n=0)
    return Spread(p50=float(np.percentile(a, 50)), p99=float(np.percentile(a, 99)), n=len(a))


def _voice(name: str) -> TTSEngine:
    from anima.speech.espeak.espeak import EspeakEngine
    from anima.speech.piper.piper import PiperEngine

    candidates: list[TTSEngine] = []
    if name in ("auto", "piper"):
        candidates.append(PiperEngine())
    if name in ("auto", "espeak"):
        candidates.append(EspeakEngine())
    errors = []
    for engine in candidates:
        try:
            engine.load()
        except AnimaError as exc:
            errors.append(str(exc))
            continue
        return engine
    raise AnimaError(f"listen bench: no voice {name!r} available: {'; '.join(errors)}")


def _speak(engine: TTSEngine, text: str) -> NDArray[np.int16]:
    chunks = list(engine.synthesize(text, "en-US", Cancel()))
    return resample(np.concatenate([c.samples for c in chunks]), chunks[0].sample_rate)


class _Seen:
    """What the listener reported, filled on its worker thread."""

    def __init__(self) -> None:
        self.reports: list[RoundReport] = []
        self._starts: queue.SimpleQueue[RecordingStart] = queue.SimpleQueue()

    def take(self, result: ListenResult) -> None:
        if isinstance(result, RecordingStart):
            self._starts.put(result)
        elif isinstance(result, RoundReport):
            self.reports.append(result)

    def next_start(self, timeout: float) -> RecordingStart | None:
        try:
            return self._starts.get(timeout=timeout)
        except queue.Empty:
            return None


class _Run:
    """Pushes audio one frame at a time, timing the worker on each."""

    def __init__(self, listener: Listener, source: PushSource) -> None:
        self.listener = listener
        self.source = source
        self.framer = Framer()
        self.position = 0
        self.idle_us: list[float] = []
        self.recording_us: list[float] = []

    def push(self, samples: NDArray[np.int16]) -> None:
        for frame in self.framer.feed(samples):
            recording = self.listener.recording
            t0 = time.perf_counter()
            self.source.push(frame)
            if not self.listener.sync(10.0):
                raise AnimaError("listen bench: the listener stopped answering")
            (self.recording_us if recording else self.idle_us).append(
                (time.perf_counter() - t0) * 1e6
            )
            self.position += FRAME_SAMPLES

    def silence(self, seconds: float) -> None:
        self.push(np.zeros(round(seconds * SAMPLE_RATE), dtype=np.int16))


def run_listen_bench(repeats: int = 2, voice: str = "auto") -> ListenBenchResult:
    """Speak every command ``repeats`` times after a manual wake, and once after "hey robot"."""
    engine = _voice(voice)
    # the endpoint fixed, so end of speech → final splits into that silence + the decision;
    # how soon a turn ends is anima.bench.turn.turn's to measure
    config = ListenConfig(turn="silence")
    seen = _Seen()
    source = PushSource()
    listener = Listener(
        source, config=config, phrases=COMMANDS,
        results=seen.take,
    )  # fmt: skip
    t0 = time.perf_counter()
    listener.start()
    load_s = time.perf_counter() - t0
    run = _Run(listener, source)
    said: list[str] = []
    speech_end: list[int] = []  # stream position of each command's last loud sample
    wake_ms: list[float] = []
    try:
        run.silence(1.0)
        for _ in range(repeats):
            for command in COMMANDS:
                audio = _speak(engine, command)
                t_wake = listener.clock.now()
                listener.wake()
                if (started := seen.next_start(5.0)) is not None:
                    wake_ms.append((started.t - t_wake) * 1e3)
                loud = np.flatnonzero(np.abs(audio) > _LOUD)
                speech_end.append(run.position + int(loud[-1]) + 1)
                said.append(command)
                run.push(audio)
                run.silence(1.5)
        manual = list(seen.reports)
        for command in COMMANDS:
            run.push(_speak(engine, f"hey robot, {command}"))
            run.silence(1.5)
        spoken_reports = [r for r in seen.reports if r.round.wake_source not in ("manual", "")]
    finally:
        listener.stop()

    ends_ms: list[float] = []
    decide_ms: list[float] = []
    correct = 0
    for report, command, end in zip(manual, said, speech_end, strict=False):
        r = report.round
        if r.outcome != "final" or r.endpoint_position is None:
            continue
        correct += normalize(r.text) == command  # Whisper writes "Wave."
        wall = report.decided_t - (report.decided_arrival_t or report.decided_t)
        decide_ms.append(wall * 1e3)
        ends_ms.append(((r.endpoint_position - end) / SAMPLE_RATE + wall) * 1e3)
    phrase_ms = [
        (r.round.wake_position - r.round.start_position) / SAMPLE_RATE * 1e3 for r in spoken_reports
    ]
    return ListenBenchResult(
        voice=engine.name,
        rounds=len(said),
        correct=correct,
        wake_to_recording_ms=_spread(wake_ms),
        spoken_wakes=len(COMMANDS),
        spoken_wake_hits=len(spoken_reports),
        phrase_end_to_wake_ms=_spread(phrase_ms) if phrase_ms else None,
        speech_end_to_final_ms=_spread(ends_ms),
        endpoint_silence_ms=config.endpoint_silence_s * 1e3,
        decide_ms=_spread(decide_ms),
        frame_idle_us=float(np.median(run.idle_us)) if run.idle_us else float("nan"),
        frame_recording_us=(
            float(np.median(run.recording_us)) if run.recording_us else float("nan")
        ),
        load_s=load_s,
    )
