"""``anima bench conversation``: does the robot do what people mean, and how fast?

The real pipeline, in-process: a :class:`~anima.runtime.Runtime` on the simulated robot (and
the simulated humanoid, ``humanoid.type: sim``) with its 100 Hz loop, the configured agent
(:func:`~anima.agent.conversation.build_conversation`: registry, planner, executor) and a
:class:`~anima.listening.Listener` on a :class:`~anima.listening.PushSource`. The speech service
plays to a sink that notes when each utterance's first audio was written.

Each trial speaks one request of the evaluation set (:mod:`anima.bench.conversation_set`) in one
voice and one room (:mod:`anima.bench.conversation_audio`), after "hey robot" (wake) or after a
manual wake (push-to-talk). The request is pushed frame by frame as fast as the listener takes
it, waiting for each (so the listener is never behind, as with a microphone); from the moment
the person stops speaking the rest — the trailing audio and the room's noise — is pushed in real
time, so everything after it (endpoint, recognition, planning, speech, motion) runs on the wall
clock and is timed there. The trial ends when the robot has been idle for a moment after the
round, or at a deadline. What the robot did is judged from its events
(:mod:`anima.bench.conversation_judge`).

False wakes are counted apart, on the configured spotter alone (``anima bench wake``'s
``count_wakes``): the dev requests without the wake phrase, and that bench's near misses, spoken
one after another (a bounded number of audio seconds).

By default each request is spoken once, the voice/noise/mode condition rotating over the
requests (``design="rotate"``); ``design="full"`` speaks every request in every condition. The
run stops starting trials at ``max_seconds``.
"""

from __future__ import annotations

import dataclasses
import itertools
import os
import random
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import numpy as np

from anima import commands as cmd
from anima.agent.conversation import Conversation, build_conversation
from anima.bench.conversation_audio import Room, Samples, Speaker, last_loud
from anima.bench.conversation_figures import TARGETS, Figures, Trial, grouped, word_errors
from anima.bench.conversation_judge import Observed, judge
from anima.bench.conversation_set import Request, Split, load_requests
from anima.config import AnimaConfig, BlinkConfig, BreathingConfig, MqttConfig
from anima.config.sections import HumanoidConfig
from anima.drivers.sim import SimDriver
from anima.errors import AnimaError
from anima.events import (
    ActionStatus,
    Event,
    ListenTimeout,
    MoveFinished,
    MoveStarted,
    PlanFinished,
    PlanStarted,
    SpeechEnded,
    SpeechStarted,
    Transcript,
    WakeDetected,
)
from anima.listening import Listener, PushSource
from anima.listening.audio import FRAME_S, FRAME_SAMPLES, SAMPLE_RATE, Framer
from anima.runtime import Runtime
from anima.speech.sinks import NullSink

Mode = Literal["wake", "ptt", "text"]  # text: the request's words as cmd.Ask (no audio)
TEXT = "text"  # the voice and room of a text trial
PRE_GESTURE = "LOOKUP_Waving"  # what the robot is doing when a stop request is spoken (4.6 s)
# steps that move the robot: their start is its first motion (the engine or the humanoid takes the
# command at once). Not MoveStarted: idle life (a full blink now and then) and the wake's glance
# start moves of their own.
MOVING_STEPS = frozenset(
    {"play_animation", "look_at", "look_at_target", "walk_forward", "walk_backward", "turn",
     "stand_motion", "posture", "set_gait"}
)  # fmt: skip
WAKE_GAP_S = 0.35  # the pause people leave after "hey robot"
WAKE_WAIT_S = 4.0  # no wake this long after the request: the phrase was missed (a spotter on
# the ASR reports it when the speech stretch ends and is decoded: late on a loaded machine)
DRAIN_S = 20.0  # at most this much silence pushed to end a round left over from a trial
STALL_S = 2.5  # nothing at all this long after the request: fast-forward the listener's wait
SETTLE_S = 0.8  # idle this long after the round: the trial is over
TRIAL_S = 10.0  # at most this long after the person stopped speaking
HUMANOID_TRIAL_S = 20.0  # … for humanoid requests (bring-up: Start → Zero → Stand → Walk)


@dataclass(frozen=True, kw_only=True)
class Condition:
    voice: str
    noise: str
    mode: Mode


@dataclass(frozen=True, kw_only=True)
class BenchOptions:
    voices: tuple[str, ...] = ("espeak-us", "espeak-gb-fast", "espeak-us-slow", "piper-joe")
    noises: tuple[str, ...] = ("clean", "white-25", "babble-15")
    modes: tuple[Mode, ...] = ("wake", "ptt")
    splits: tuple[Split, ...] = ("dev", "heldout")
    categories: tuple[str, ...] = ()  # only these categories (empty: all)
    limit: int | None = None  # at most this many requests per split
    design: Literal["rotate", "full"] = "rotate"
    max_seconds: float = 240.0  # no trial starts after this (the false-wake run included)
    false_wake_s: float = 60.0  # audio seconds of non-wake speech for false wakes (0: skip)
    config: AnimaConfig | None = None  # the robot's configuration (None: the defaults)
    set_dir: Path | None = None  # the evaluation set's folder (None: the source tree's)
    seed: int = 13  # the order of the trials


@dataclass(frozen=True, kw_only=True)
class FalseWakes:
    audio_s: float  # seconds of speech without the wake phrase
    wakes: int
    per_hour: float


@dataclass(frozen=True, kw_only=True)
class ConversationBenchResult:
    engines: dict[str, str]  # asr, wake, planner, robot voice: what was measured
    trials: tuple[Trial, ...]
    figures: dict[str, dict[str, Figures]]  # split → group ("overall", "voice=…") → figures
    false_wakes: FalseWakes | None
    loop_rate_hz: float  # ticks per second over the trials (not the start-up)
    loop_missed: int  # missed ticks of the 100 Hz loop over the trials
    load_before: tuple[float, float, float]  # os.getloadavg() at the start and at the end
    load_after: tuple[float, float, float]
    seconds: float
    skipped: int  # trials not run because max_seconds was reached
    targets: dict[str, float] = field(default_factory=lambda: dict(TARGETS))


class _StampedSink(NullSink):
    """A null sink that notes when each utterance's audio began (monotonic seconds)."""

    def __init__(self) -> None:
        super().__init__()
        self.onsets: list[float] = []

    def start(self, sample_rate: int) -> None:
        self.onsets.append(time.monotonic())
        super().start(sample_rate)


class _Log:
    """Every event of the runtime, with the time it happened (engine clock: monotonic)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.events: list[tuple[float, Event]] = []

    def add(self, event: Event) -> None:
        with self._lock:
            self.events.append((event.t or time.monotonic(), event))

    def since(self, t0: float) -> list[tuple[float, Event]]:
        with self._lock:
            return [(t, e) for t, e in self.events if t >= t0]


def _conditions(o: BenchOptions) -> list[Condition]:
    audio = [m for m in o.modes if m != "text"]
    out = [
        Condition(voice=v, noise=n, mode=m)
        for v, n, m in itertools.product(o.voices, o.noises, audio)
    ]
    if "text" in o.modes:  # one condition: no voice, no room
        out.append(Condition(voice=TEXT, noise=TEXT, mode="text"))
    return out


def plan_trials(
    requests: dict[Split, list[Request]], o: BenchOptions
) -> list[tuple[Request, Condition]]:
    """The trials in the order they run: each split shuffled, the splits woven together, so a
    run cut short by ``max_seconds`` still covers every split, category and condition."""
    conds = _conditions(o)
    rng = random.Random(o.seed)
    per_split: list[list[tuple[Request, Condition]]] = []
    for reqs in requests.values():
        if o.design == "full":
            pairs = [(r, c) for r in reqs for c in conds]
        else:
            offset = rng.randrange(len(conds))
            pairs = [(r, conds[(i + offset) % len(conds)]) for i, r in enumerate(reqs)]
        rng.shuffle(pairs)
        per_split.append(pairs)
    total = sum(len(p) for p in per_split)
    woven = sorted(
        ((k + 0.5) / len(pairs), n, pair)
        for n, pairs in enumerate(per_split)
        for k, pair in enumerate(pairs)
    )  # each split spread evenly over the run
    assert len(woven) == total
    return [pair for _, _, pair in woven]


class _Bench:
    """The runtime, the conversation and the listener for one run; trials one at a time."""

    def __init__(self, config: AnimaConfig, speaker: Speaker) -> None:
        self.speaker = speaker
        self.sink = _StampedSink()
        self.log = _Log()
        self.source = PushSource()
        self.framer = Framer()
        self.runtime = Runtime(config, driver=SimDriver(), audio_sink=self.sink)
        self.conversation: Conversation | None = None
        self.listener: Listener | None = None

    def start(self) -> None:
        rt = self.runtime
        rt.events.subscribe(self.log.add)
        conversation = build_conversation(rt, audio_in=self.source)  # the agent's own wiring
        self.listener = conversation.listener
        rt.start()
        rt.agent = self.conversation = conversation
        conversation.start()

    def stop(self) -> None:
        if self.conversation is not None:
            self.conversation.stop()
            self.runtime.agent = None
        self.runtime.stop(ease=False)

    # ------------------------------------------------------------------ feeding audio
    def push_fast(self, samples: Samples) -> None:
        """Frame by frame, each waited for: the listener is never behind."""
        assert self.listener is not None
        for frame in self.framer.feed(samples):
            self.source.push(frame)
            if not self.listener.sync(10.0):
                raise AnimaError("conversation bench: the listener stopped answering")

    def push_paced(
        self,
        samples: Samples,
        room: Room,
        *,
        until: Callable[[], bool],
        stalled: Callable[[], bool],
        deadline: float,
    ) -> bool:
        """``samples`` then the room's noise, one frame per 32 ms of wall time, until
        ``until()`` or ``deadline`` (monotonic). Once ``stalled()`` (nothing has happened for a
        while: the listener waits out a timeout on audio time) the rest goes as fast as the
        listener takes it; True when that happened (the trial's latencies are then not real)."""
        assert self.listener is not None
        frames = self.framer.feed(samples)
        start = time.monotonic()
        fast = False
        for n in itertools.count():
            now = time.monotonic()
            if now >= deadline or (n >= len(frames) and until()):
                return fast
            fast = fast or stalled()
            if fast:
                self.listener.sync(10.0)
            else:
                time.sleep(max(0.0, start + n * FRAME_S - now))
            frame = frames[n] if n < len(frames) else room.mix(np.zeros(FRAME_SAMPLES, np.int16))
            self.source.push(frame)
        return fast

    # ------------------------------------------------------------------ one trial
    def trial(
        self, request: Request, cond: Condition, room: Room, wake_audio: Samples | None
    ) -> Trial:
        began = time.monotonic()
        self._settle()
        if cond.mode == "text":
            return self._text_trial(request, cond, room, began)
        assert wake_audio is not None
        command = self.speaker.say(cond.voice, request.text)
        room.level_for(command)
        t0 = time.monotonic()
        if request.kind == "stop":
            self._pre_gesture(t0)
        self.push_fast(room.quiet(0.3))
        if cond.mode == "ptt":
            assert self.conversation is not None
            self.conversation.wake("manual")
            audio = command
        else:
            gap = np.zeros(round(WAKE_GAP_S * SAMPLE_RATE), dtype=np.int16)
            audio = np.concatenate([wake_audio, gap, command])
        mixed = room.mix(audio)
        cut = len(audio) - len(command) + last_loud(command)
        self.push_fast(mixed[:cut])
        t_end = time.monotonic()  # the person has stopped speaking
        limit = HUMANOID_TRIAL_S if request.humanoid else TRIAL_S
        fast = self.push_paced(
            mixed[cut:], room,
            until=lambda: self._over(t0, t_end, cond.mode, request),
            stalled=lambda: self._stalled(t_end),
            deadline=t_end + limit,
        )  # fmt: skip
        return self._finish(request, cond, t0=t0, t_end=t_end, fast=fast, began=began)

    def _text_trial(self, request: Request, cond: Condition, room: Room, began: float) -> Trial:
        """The request's words straight to the agent (``cmd.Ask``): understanding alone."""
        t0 = time.monotonic()
        if request.kind == "stop":
            self._pre_gesture(t0)
        t_end = time.monotonic()
        self.runtime.execute(cmd.Ask(text=request.text))
        limit = HUMANOID_TRIAL_S if request.humanoid else TRIAL_S
        fast = self.push_paced(
            np.zeros(0, np.int16), room,
            until=lambda: self._over(t0, t_end, cond.mode, request),
            stalled=lambda: False, deadline=t_end + limit,
        )  # fmt: skip
        return self._finish(request, cond, t0=t0, t_end=t_end, fast=fast, began=began)

    def _finish(
        self,
        request: Request,
        cond: Condition,
        *,
        t0: float,
        t_end: float,
        fast: bool,
        began: float,
    ) -> Trial:
        self._abandon()
        seen, audio_t, motion_t, heard = self._observe(t0, t_end, cond.mode, request)
        assert self.conversation is not None
        verdict = judge(request, seen, self.conversation.registry)
        spoken = cond.mode != "text"  # a text trial has no word error
        return Trial(
            text=request.text, category=request.category, split=request.split,
            voice=cond.voice, noise=cond.noise, mode=cond.mode,
            correct=verdict.correct, outcome=verdict.outcome, detail=verdict.detail,
            kind=request.kind, woke=seen.woke if cond.mode == "wake" else None,
            transcript=heard if spoken else request.text,
            word_errors=word_errors(request.text, heard) if spoken else 0,
            words=len(request.text.split()) if spoken else 0,
            first_audio_ms=None if audio_t is None or fast else (audio_t - t_end) * 1e3,
            first_motion_ms=None if motion_t is None or fast else (motion_t - t_end) * 1e3,
            fast_forwarded=fast,
            seconds=time.monotonic() - began,
        )  # fmt: skip

    def _pre_gesture(self, t0: float) -> None:
        started = threading.Event()
        unsubscribe = self.runtime.events.subscribe(
            lambda e: started.set() if getattr(e, "name", "") == PRE_GESTURE else None,
            MoveStarted.kind,
        )
        try:
            self.runtime.execute(cmd.PlayAnimation(name=PRE_GESTURE))
            started.wait(2.0)
        finally:
            unsubscribe()

    def _over(self, t0: float, t_end: float, mode: Mode, request: Request) -> bool:
        """The round ended, nothing runs or speaks, and nothing happened for SETTLE_S; or the
        wake phrase went unheard (nothing will happen)."""
        events = self.log.since(t0)
        now = time.monotonic()
        woke = any(isinstance(e, WakeDetected) for _, e in events)
        if mode == "wake" and not woke and now - t_end > WAKE_WAIT_S:
            return request.kind != "stop" or not self._pre_moving(events)
        if not events:
            return False
        round_over = mode == "text" or any(
            isinstance(e, ListenTimeout) or (isinstance(e, Transcript) and e.final)
            for _, e in events
        )
        plans = {e.plan for _, e in events if isinstance(e, PlanStarted)}
        done = {e.plan for _, e in events if isinstance(e, PlanFinished)}
        talks = {e.utterance for _, e in events if isinstance(e, SpeechStarted)}
        ended = {e.utterance for _, e in events if isinstance(e, SpeechEnded)}
        moving = request.kind == "stop" and self._pre_moving(events)
        if not round_over or plans - done or talks - ended or moving or self.runtime.speaking:
            return False
        return now - max(t for t, _ in events) > SETTLE_S

    def _stalled(self, t_end: float) -> bool:
        """Nothing at all has happened since the person stopped speaking, for STALL_S."""
        now = time.monotonic()
        return now - t_end > STALL_S and not self.log.since(t_end)

    @staticmethod
    def _pre_moving(events: Sequence[tuple[float, Event]]) -> bool:
        return not any(isinstance(e, MoveFinished) and e.name == PRE_GESTURE for _, e in events)

    def _abandon(self) -> None:
        """At the deadline: whatever still runs is canceled, so the next trial starts clean."""
        assert self.conversation is not None
        self.conversation.executor.cancel("bench: trial over")
        if self.runtime.speech is not None and self.runtime.speaking:
            self.runtime.speech.stop_speaking()

    def _settle(self) -> None:
        """Before a trial: no round left over (a trial cut at its deadline while the listener
        still recorded babble would hand its transcript to the next), no gaze posture held,
        nothing moving or said."""
        assert self.listener is not None
        assert self.conversation is not None
        if self.listener.recording:
            silence = np.zeros(FRAME_SAMPLES, np.int16)
            for _ in range(round(DRAIN_S / FRAME_S)):
                if not self.listener.recording:
                    break
                self.push_fast(silence)
            self.listener.sync(10.0)
            self.runtime.events.flush(1.0)
            time.sleep(0.2)  # the conversation's worker takes the transcript, if any
            self.conversation.interrupt(WakeDetected(t=time.monotonic(), source="bench"))
        behaviour = self.runtime.behaviour
        if behaviour.latched_target is not None:  # each trial from the same start: a gaze
            # posture held from the last one would refuse the next look_at ("latched")
            self.runtime.execute(cmd.LookAtTarget(name=behaviour.config.default_posture))
        self.runtime.engine.wait_until_idle(6.0)
        deadline = time.monotonic() + 6.0
        while self.runtime.speaking and time.monotonic() < deadline:
            time.sleep(0.02)
        self.runtime.events.flush(1.0)

    def _observe(
        self, t0: float, t_end: float, mode: Mode, request: Request
    ) -> tuple[Observed, float | None, float | None, str]:
        self.runtime.events.flush(1.0)
        seen = Observed(woke=mode != "wake")  # heard by the spotter, in wake mode
        motion: list[float] = []
        heard: list[str] = []
        for t, e in self.log.since(t0):
            if isinstance(e, WakeDetected) and e.source != "manual":
                seen.woke = seen.woke or mode == "wake"
            elif isinstance(e, Transcript) and e.final:
                heard.append(e.text)
            elif isinstance(e, PlanStarted):
                seen.plans.append(tuple(e.steps))
            elif isinstance(e, ActionStatus):
                if e.status == "failed":
                    seen.failed.append(f"{e.step}: {e.message}"[:160])
                elif e.status == "running" and e.action in MOVING_STEPS and t >= t_end:
                    motion.append(t)
            elif isinstance(e, SpeechStarted) and t >= t_end:
                seen.spoken.append(e.text)
            elif isinstance(e, MoveFinished) and e.name == PRE_GESTURE and e.cut and t >= t_end:
                seen.pre_cut = True
        onsets = [t for t in self.sink.onsets if t >= t_end]
        first_audio = min(onsets) if onsets else None
        return seen, first_audio, min(motion) if motion else None, " ".join(heard)


def _false_wakes(
    config: AnimaConfig,
    *,
    speaker: Speaker,
    texts: Sequence[str],
    voices: Sequence[str],
    seconds: float,
) -> FalseWakes:
    """Wakes the configured spotter reports over ``seconds`` of speech that never says the
    wake phrase: ``texts`` and ``anima bench wake``'s near misses ("hey Robert"), each voice in
    turn, half a second apart — counted by that bench's own :func:`count_wakes`."""
    from anima.bench.wake import NEAR_MISSES, count_wakes
    from anima.listening.spotting import make_spotter

    talk: list[Samples] = []
    n = 0
    lines = [*texts, *NEAR_MISSES]
    for text, voice in zip(itertools.cycle(lines), itertools.cycle(voices), strict=False):
        if n >= seconds * SAMPLE_RATE or len(talk) >= 4 * len(lines) * len(voices):
            break
        talk += [speaker.say(voice, text), np.zeros(SAMPLE_RATE // 2, np.int16)]
        n += len(talk[-2]) + len(talk[-1])
    spotter = make_spotter(config.listen)
    spotter.load()
    try:
        wakes = count_wakes(spotter, np.concatenate(talk))
    finally:
        spotter.close()
    audio_s = n / SAMPLE_RATE
    return FalseWakes(audio_s=audio_s, wakes=wakes, per_hour=wakes * 3600 / max(audio_s, 1e-9))


def bench_config(base: AnimaConfig | None) -> AnimaConfig:
    """The robot for the bench: the given config with MQTT off, the simulated humanoid, and
    no breathing or blinking (so only what the requests asked for moves)."""
    cfg = base or AnimaConfig()
    quiet = dataclasses.replace(
        cfg.motion,
        breathing=BreathingConfig(enabled=False),
        blink=BlinkConfig(enabled=False),
    )
    humanoid = (
        cfg.humanoid if cfg.humanoid.type != "none" else HumanoidConfig(type="sim", sim_port=0)
    )
    return dataclasses.replace(cfg, mqtt=MqttConfig(enabled=False), motion=quiet, humanoid=humanoid)


def run_conversation_bench(
    options: BenchOptions | None = None, *, progress: Callable[[Trial], None] | None = None
) -> ConversationBenchResult:
    o = options or BenchOptions()
    t_start = time.monotonic()
    load_before = os.getloadavg()
    config = bench_config(o.config)
    speaker = Speaker()
    for voice in o.voices:
        speaker.engine(voice)
    bench = _Bench(config, speaker)
    bench.start()
    trials: list[Trial] = []
    skipped = 0
    try:
        assert bench.conversation is not None
        registry = bench.conversation.registry
        requests = {s: _select(load_requests(registry, s, o.set_dir), o) for s in o.splits}
        plan = plan_trials(requests, o)
        rooms = {n: Room(n, speaker) for n in o.noises}
        rooms[TEXT] = Room("clean", speaker)  # the microphone hears a quiet room meanwhile
        wake_audio = {v: speaker.say(v, config.listen.wake_phrase) for v in o.voices}
        stats0 = bench.runtime.engine.stats()
        reserve = min(30.0, o.false_wake_s / 2)  # left for the false-wake run
        for request, cond in plan:
            if time.monotonic() - t_start > o.max_seconds - reserve:
                skipped += 1
                continue
            trial = bench.trial(request, cond, rooms[cond.noise], wake_audio.get(cond.voice))
            trials.append(trial)
            if progress is not None:
                progress(trial)
        stats = bench.runtime.engine.stats()
        engines = _engines(bench)
    finally:
        bench.stop()
    false_wakes = None
    left = o.max_seconds - (time.monotonic() - t_start)
    if o.false_wake_s > 0 and left > 5:
        texts = [r.text for reqs in requests.values() for r in reqs]
        seconds = min(o.false_wake_s, 4 * left)  # fed faster than real time
        false_wakes = _false_wakes(
            config, speaker=speaker, texts=texts, voices=o.voices, seconds=seconds
        )
    return ConversationBenchResult(
        engines=engines,
        trials=tuple(trials),
        figures=grouped(trials),
        false_wakes=false_wakes,
        loop_rate_hz=(stats.ticks - stats0.ticks) / max(stats.elapsed_s - stats0.elapsed_s, 1e-9),
        loop_missed=stats.missed - stats0.missed,
        load_before=load_before,
        load_after=os.getloadavg(),
        seconds=time.monotonic() - t_start,
        skipped=skipped,
    )


def _select(requests: list[Request], o: BenchOptions) -> list[Request]:
    """The requests of the chosen categories; with ``limit``, taken from each category in turn
    (so a short run still asks for gestures, questions, refusals and stops)."""
    chosen = [r for r in requests if not o.categories or r.category in o.categories]
    if o.limit is None:
        return chosen
    by_category: dict[str, list[Request]] = {}
    for r in chosen:
        by_category.setdefault(r.category, []).append(r)
    turns = itertools.zip_longest(*by_category.values())
    return [r for turn in turns for r in turn if r is not None][: o.limit]


def _engines(bench: _Bench) -> dict[str, str]:
    cfg = bench.runtime.config
    listener = bench.listener
    speech = bench.runtime.speech
    spotter = listener.spotter if listener is not None else None
    return {
        "asr": type(listener.recognizer).__name__ if listener is not None else "none",
        "wake": type(spotter).__name__ if spotter is not None else "none",
        "planner": cfg.agent.planner,
        "robot voice": speech.engines[0].name if speech is not None and speech.engines else "none",
    }
