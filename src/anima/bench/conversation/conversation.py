"""``anima bench conversation``: does the robot do what people mean, and how fast?

The real pipeline, in-process: a :class:`~anima.runtime.Runtime` on the simulated robot (and
the simulated humanoid, ``humanoid.type: sim``) with its 100 Hz loop, the configured agent
(:func:`~anima.agent.conversation.build_conversation`: registry, planner, executor) and a
:class:`~anima.listening.Listener` on a :class:`~anima.listening.PushSource`. The speech service
plays to a sink that notes when each utterance's first audio was written.

Each trial speaks one request of the evaluation set (:mod:`anima.bench.conversation.requests`) in
one voice and one room (:mod:`anima.bench.conversation.audio`), after "hey robot" (wake) or after a
manual wake (push-to-talk). How a trial is fed and timed: :mod:`anima.bench.conversation.trial`;
what the robot did is judged from its events (:mod:`anima.bench.conversation.judge`).
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
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import numpy as np
from numpy.typing import NDArray

from anima.audio import SAMPLE_RATE
from anima.bench.conversation.audio import Room, Samples, Speaker
from anima.bench.conversation.figures import TARGETS, Figures, Trial, grouped
from anima.bench.conversation.requests import Request, Split, load_requests
from anima.bench.conversation.trial import TEXT, Condition, Harness, Mode
from anima.choices import HumanoidType
from anima.config import AnimaConfig, BlinkConfig, BreathingConfig, MqttConfig
from anima.config.sections import HumanoidConfig


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
    loop_p99_ms: float = float("nan")  # each tick's lateness over the trials: p99 …
    loop_max_ms: float = float("nan")  # … and the worst
    load_before: tuple[float, float, float]  # os.getloadavg() at the start and at the end
    load_after: tuple[float, float, float]
    seconds: float
    skipped: int  # trials not run because max_seconds was reached
    targets: dict[str, float] = field(default_factory=lambda: dict(TARGETS))
    duplex: bool = False  # listen.duplex: replies may begin early (listen.turn_early_s)
    early_replies: int = 0  # replies begun at a pause before the end of the turn …
    taken_back: int = 0  # … and of them taken back (the person went on, or other words)


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
    from anima.bench.wake.wake import NEAR_MISSES, count_wakes
    from anima.listening.makers import make_spotter

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
        cfg.humanoid
        if cfg.humanoid.type != "none"
        else HumanoidConfig(type=HumanoidType.SIM, sim_port=0)
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
    bench = Harness(config, speaker)
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
        engine = bench.runtime.engine
        stats0 = engine.stats()
        lateness: list[NDArray[np.float64]] = []  # each tick's, trial by trial
        reserve = min(30.0, o.false_wake_s / 2)  # left for the false-wake run
        for request, cond in plan:
            if time.monotonic() - t_start > o.max_seconds - reserve:
                skipped += 1
                continue
            first_tick = engine.stats().ticks
            trial = bench.trial(request, cond, rooms[cond.noise], wake_audio.get(cond.voice))
            lateness.append(engine.period_errors_since(first_tick))
            trials.append(trial)
            if progress is not None:
                progress(trial)
        stats = bench.runtime.engine.stats()
        engines = _engines(bench)
        conv = bench.conversation
        early = (conv.early_replies, conv.taken_back) if conv is not None else (0, 0)
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
        loop_p99_ms=_ms_percentile(lateness, 99),
        loop_max_ms=_ms_percentile(lateness, 100),
        load_before=load_before,
        load_after=os.getloadavg(),
        seconds=time.monotonic() - t_start,
        skipped=skipped,
        duplex=config.listen.duplex,
        early_replies=early[0],
        taken_back=early[1],
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


def _engines(bench: Harness) -> dict[str, str]:
    cfg = bench.runtime.config
    listener = bench.listener
    speech = bench.runtime.speech
    spotter = listener.spotter if listener is not None else None
    return {
        "asr": type(listener.recognizer).__name__ if listener is not None else "none",
        "wake": type(spotter).__name__ if spotter is not None else "none",
        "planner": cfg.agent.planner.type,
        "robot voice": speech.engines[0].name if speech is not None and speech.engines else "none",
    }


def _ms_percentile(chunks: list[NDArray[np.float64]], q: float) -> float:
    """The ``q``-th percentile (ms) of the ticks' lateness (s) gathered trial by trial."""
    every = np.concatenate(chunks) if chunks else np.zeros(0)
    return float(np.percentile(every, q) * 1e3) if every.size else float("nan")
