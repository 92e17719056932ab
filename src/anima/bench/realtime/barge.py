"""What both protocols' barge-in trials in ``anima bench realtime`` share
(:mod:`anima.bench.realtime.session` for OpenAI's, :mod:`anima.bench.realtime.gemini` for
Gemini Live's): the runtime's config, a sink that notes its stops and starts, the scripted
person pushing the microphone at real-time pace, what the person says, and the figures."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field

import numpy as np

from anima.agent.realtime import RealtimeAgent
from anima.agent.vocabulary import robot_registry
from anima.clock import Clock
from anima.config import AnimaConfig, BlinkConfig, BreathingConfig, MotionConfig, MqttConfig
from anima.config.planner import GeminiLivePlannerConfig, RealtimePlannerConfig
from anima.listening.sources import PushSource
from anima.listening.vad import EnergyVad
from anima.runtime import Runtime
from anima.speech.base import Samples
from anima.speech.sinks import NullSink
from anima.testing.tts import ScriptedEngine

BARGE_IN_S = 0.8  # listen.barge_in_s's default
WAIT_S = 5.0  # a trial not decided by then is a miss, not a figure
FRAME = 512  # 16 kHz samples per microphone frame (32 ms)
ECHO_S = 0.096  # the echo condition's burst
ECHO_WAIT_S = 1.2  # an echo's trial: the pause and its resume (a false onset) are over by then


@dataclass(kw_only=True)
class BargeFigures:
    condition: str
    trials: int = 0
    # voice onset → the sink's first stop after it (the pause at the onset, or the cut)
    onset_to_stop_ms: list[float] = field(default_factory=list)
    onset_to_cut_ms: list[float] = field(default_factory=list)  # voice onset → truncate sent
    rule_to_stop_ms: list[float] = field(default_factory=list)  # the rule's evidence → cut
    end_error_ms: list[float] = field(default_factory=list)  # audio_end_ms − sink's played
    paused_ms: list[float] = field(default_factory=list)  # a pause that resumed: its length
    stopped: int = 0  # trials that stopped the robot
    paused: int = 0  # trials whose voice onset paused the robot
    early: int = 0  # trials whose robot was cut before the person's voice began (a fault)
    false_onsets: int = 0  # pauses the duplex rules resumed as false onsets


class StopSink:
    """The null sink, noting when each utterance was stopped and how much of it had played
    (across a pause's stop and its resume's start: the trial's item, from :meth:`new_item`),
    and when it was started again."""

    name = "null"

    def __init__(self, clock: Clock) -> None:
        self.sink = NullSink(clock)
        self._rate = 22050
        self.stops: list[tuple[float, float]] = []  # (time.monotonic(), the item's played ms)
        self.starts: list[float] = []  # time.monotonic() of each start
        self._before_ms = 0.0  # the item's ms played before the sink's last start
        self._run_ms = 0.0  # ms played since the last start, at its stop

    def new_item(self) -> None:
        """The next start is a new item's (not a resume of the one before)."""
        self._before_ms = self._run_ms = 0.0

    def start(self, sample_rate: int) -> None:
        self._before_ms += self._run_ms
        self._run_ms = 0.0
        self._rate = sample_rate
        self.sink.start(sample_rate)
        self.starts.append(time.monotonic())

    def write(self, samples: Samples) -> None:
        self.sink.write(samples)

    def played(self) -> int:
        return self.sink.played()

    def written(self) -> int:
        return self.sink.written()

    def stop(self) -> None:
        self.sink.stop()  # the clock frozen: what it played, exactly
        self._run_ms = self.sink.played() * 1000 / self._rate
        self.stops.append((time.monotonic(), self._before_ms + self._run_ms))

    def close(self) -> None:
        self.sink.close()


def bench_config() -> AnimaConfig:
    # no breathing or blinks: the frames rest until something moves the robot
    motion = MotionConfig(
        breathing=BreathingConfig(enabled=False), blink=BlinkConfig(enabled=False)
    )
    return AnimaConfig(mqtt=MqttConfig(enabled=False), motion=motion)


class Person:
    """The microphone, pushed a 32 ms frame every 32 ms (silence, or what the person says) on
    a thread of its own; notes when each frame of speech was pushed."""

    def __init__(self, mic: PushSource) -> None:
        self.mic = mic
        self._lock = threading.Lock()
        self._speech: np.ndarray = np.zeros(0, np.int16)
        self.pushed: list[float] = []  # time.monotonic() each frame of the speech was pushed
        self._stopping = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="bench-person", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stopping.set()
        self._thread.join(2.0)

    def say(self, samples: np.ndarray) -> None:
        with self._lock:
            pad = (-len(samples)) % FRAME
            self._speech = np.concatenate([samples, np.zeros(pad, np.int16)])
            self.pushed = []

    def _loop(self) -> None:
        silence = np.zeros(FRAME, np.int16)
        t = time.monotonic()
        while not self._stopping.is_set():
            with self._lock:
                frame, self._speech = self._speech[:FRAME], self._speech[FRAME:]
                speaking = len(frame) > 0
            self.mic.push(frame if speaking else silence)
            if speaking:
                self.pushed.append(time.monotonic())
            t += FRAME / 16_000
            if t < time.monotonic() - FRAME / 16_000:
                # late (a busy machine): no burst to catch up, so each frame's push time
                # stays when its audio ended, which the onset's time is read from
                t = time.monotonic()
            time.sleep(max(0.0, t - time.monotonic()))


def utterance(condition: str, text: str, k: int) -> np.ndarray:
    """What the person says (16 kHz): the scripted TTS voice, or the echo's noise burst."""
    if condition == "echo":
        rng = np.random.default_rng(k)
        return (3000 * rng.standard_normal(round(ECHO_S * 16_000))).astype(np.int16)
    speech, _ = ScriptedEngine().render(text)
    return speech


def wait_quiet(runtime: Runtime) -> None:
    deadline = time.monotonic() + WAIT_S
    while (runtime.speaking or runtime.moving) and time.monotonic() < deadline:
        time.sleep(0.01)


def bench_agent(
    runtime: Runtime, settings: RealtimePlannerConfig | GeminiLivePlannerConfig, mic: PushSource
) -> RealtimeAgent:
    """The realtime brain the trials talk to, attached to ``runtime``: ``settings``' protocol,
    hearing ``mic`` as an echo-cancelled microphone in full duplex, with the energy VAD as
    anima's own ear (Silero hears the bench's synthetic voice late and with gaps)."""
    agent = RealtimeAgent(
        runtime,
        robot_registry(runtime),
        settings,
        runtime.config.agent,
        key="bench",
        source=mic,
        echo_cancelled=True,
        barge_in_s=BARGE_IN_S,
        vad=EnergyVad(),
    )
    runtime.attach_agent(agent)
    return agent
