"""The 100 Hz loop while the speech recognizer decodes, against the same loop with no decode.

One process: the real runtime (:func:`anima.build.build`, the sim driver, doors off) on the real
clock, and the recognizer the default config makes (``listen.asr``: Whisper tiny.en when
installed), biased to the robot's phrases as the agent's listener makes it, loaded beside the
running loop. After ``settle_s``, two windows of ``seconds`` each: first the runtime alone,
then a thread feeding a few seconds of speech through the recognizer and taking its final text
(the path a turn takes: partial decodes on its thread, then the final), again and again. The
decoding window goes on past ``seconds`` until the first of them has finished (at most
:data:`FIRST_DECODE_S`): one takes ~1 s on two idle cores but 5 s at a load average of 7, when
a quick run's 1 s window (and once its 3 s one) read a loop during no finished decode. No
recorded human speech is installed on this machine kind, so the speech is eSpeak NG's (what
Whisper costs depends on the audio's length far more than on the voice).

Per window: decodes finished, deadlines missed, the tick rate, and each tick's lateness
(|start − deadline|, the engine's period error) p99 and max.
"""

from __future__ import annotations

import dataclasses
import threading
import time
from dataclasses import dataclass

import numpy as np

from anima.agent.assembly import listening_phrases
from anima.agent.vocabulary import robot_registry
from anima.audio import SAMPLE_RATE, Frame
from anima.bench.asr.asr import LONG_REQUESTS, Voice, recognize, speak
from anima.build import build
from anima.config import AnimaConfig
from anima.listening.asr import Recognizer
from anima.listening.makers import make_recognizer
from anima.runtime import Runtime
from anima.speech.espeak.espeak import EspeakEngine

FIRST_DECODE_S = 60.0  # the decoding window's longest wait for its first finished decode


@dataclass(frozen=True, kw_only=True)
class LoopWindow:
    decoding: bool
    seconds: float
    decodes: int  # finished within the window (0 without decoding)
    ticks: int
    rate_hz: float
    missed: int
    late_p99_ms: float
    late_max_ms: float


@dataclass(frozen=True, kw_only=True)
class DecodeLoop:
    recognizer: str  # the class the config made
    speech_s: float  # length of the audio decoded each time
    last_text: str  # what it heard the last time (shows a real decode ran)
    quiet: LoopWindow
    decoding: LoopWindow


def _window(
    runtime: Runtime,
    seconds: float,
    work: threading.Thread | None,
    first: threading.Event | None = None,
) -> LoopWindow:
    """The loop over ``seconds`` (with ``work`` started at its start), and past them until
    ``first`` is set, if given (at most :data:`FIRST_DECODE_S` in all)."""
    engine = runtime.engine
    before = engine.stats()
    if work is not None:
        work.start()
    time.sleep(seconds)
    if first is not None:
        first.wait(max(0.0, FIRST_DECODE_S - seconds))
    after = engine.stats()
    late = engine.period_errors_since(before.ticks) * 1e3
    span = after.elapsed_s - before.elapsed_s
    ticks = after.ticks - before.ticks
    return LoopWindow(
        decoding=work is not None, seconds=span, decodes=0, ticks=ticks,
        rate_hz=ticks / span if span > 0 else 0.0,
        missed=after.missed - before.missed,
        late_p99_ms=float(np.percentile(late, 99)) if late.size else float("nan"),
        late_max_ms=float(late.max()) if late.size else float("nan"),
    )  # fmt: skip


def loop_during_decode(seconds: float, settle_s: float, *, warm_up: bool = True) -> DecodeLoop:
    """``warm_up``: decode once before the windows (a quick run skips it: measured, its first
    decode took 1.18 s and the next 1.17 s, since :meth:`Recognizer.load` already ran the
    model once)."""
    config = AnimaConfig()
    engine = EspeakEngine()
    engine.load()
    audio = speak(Voice("espeak-en-us", engine, "en-US"), LONG_REQUESTS[0])
    runtime = build(config, doors=False)
    runtime.start()
    try:
        # the recognizer as the agent's listener makes it: biased to the robot's phrases
        phrases = listening_phrases(robot_registry(runtime), config.listen)
        recognizer = make_recognizer(config.listen, phrases=phrases)
        recognizer.load()
        try:
            return _measure(runtime, recognizer, audio, seconds, settle_s, warm_up=warm_up)
        finally:
            recognizer.close()
    finally:
        runtime.stop(ease=False)


def _measure(
    runtime: Runtime,
    recognizer: Recognizer,
    audio: Frame,
    seconds: float,
    settle_s: float,
    *,
    warm_up: bool,
) -> DecodeLoop:
    # once before the windows: its first run is not steady
    heard = [recognize(recognizer, audio)] if warm_up else []
    time.sleep(settle_s)
    quiet = _window(runtime, seconds, None)
    stop = threading.Event()
    first = threading.Event()
    done = [0]

    def decode() -> None:
        while not stop.is_set():
            heard.append(recognize(recognizer, audio))
            done[0] += 1
            first.set()

    worker = threading.Thread(target=decode, name="budget-decode", daemon=True)
    busy = _window(runtime, seconds, worker, first)
    decodes = done[0]  # those finished inside the window
    stop.set()
    worker.join(30.0)
    return DecodeLoop(
        recognizer=type(recognizer).__name__,
        speech_s=len(audio) / SAMPLE_RATE,
        last_text=heard[-1],
        quiet=quiet,
        decoding=dataclasses.replace(busy, decodes=decodes),
    )
