"""``anima bench agent``: the voice agent's latencies, stage by stage.

* wake → recording started, and end of speech → final transcript (the listening bench, on
  speech synthesized by anima's own voice);
* final transcript → first motion frame: the rule planner, plan validation and the executor
  on the real 100 Hz engine (``Ask`` → the first frame sent after the gesture started);
* interrupt → motion held: a wake cancels a running gesture; the tick that holds it;
* hostile planners (:func:`run_hostile_planner_bench`): the conversation on an OpenAI-compatible
  server played on 127.0.0.1 that dribbles a byte a second (request → the spoken apology,
  against ``timeout_s``), and that sends a 50 MB reply with and without a Content-Length
  (request → refusal, and the Python memory it took: tracemalloc's peak), with the motion
  loop's missed ticks over all of it.
"""

from __future__ import annotations

import threading
import time
import tracemalloc
from dataclasses import dataclass

import numpy as np

from anima import commands as cmd
from anima.bench.agent.interrupt import measure_interrupt_latency
from anima.bench.agent.listen import ListenBenchResult, Spread, run_listen_bench
from anima.build import attach_agent
from anima.config import AnimaConfig, BlinkConfig, BreathingConfig, MotionConfig, MqttConfig
from anima.drivers.base import Frame
from anima.drivers.sim import SimDriver
from anima.events import MoveStarted, SpeechStarted
from anima.runtime import Runtime
from anima.speech.sinks import NullSink
from anima.testing.llm import Scripted, ScriptedOpenAIServer
from anima.testing.tts import ScriptedEngine


@dataclass(frozen=True, kw_only=True)
class AgentBenchResult:
    listen: ListenBenchResult
    request_to_motion_ms: Spread  # final transcript → first frame of the gesture
    interrupt_held_ms: Spread  # cancel → the tick that holds the motion (engine clock)
    interrupt_target_ms: float = 10.0  # p99 target (the seed polled every 100–200 ms)
    hostile: HostilePlannerResult | None = None  # None: not measured (hostile=False)


@dataclass(frozen=True, kw_only=True)
class HostileReply:
    """One hostile reply: how long until the person heard the apology, what it cost."""

    name: str
    turn_s: float  # Ask → the spoken apology (SpeechStarted)
    peak_mb: float  # tracemalloc's peak over the turn (Python allocations, this process)
    reason: str  # the planner's reason, as its CommandRejected event gave it


@dataclass(frozen=True, kw_only=True)
class HostilePlannerResult:
    timeout_s: float  # the planner's whole-request deadline
    replies: tuple[HostileReply, ...]
    missed_ticks: int  # the motion loop's missed deadlines over all the hostile turns
    period_error_max_ms: float  # the loop's worst period error at the end (recent window)


class _StampedSim(SimDriver):
    """The simulated robot, remembering when each frame was sent (monotonic seconds)."""

    def __init__(self) -> None:
        super().__init__(history=4096)
        self.stamps: list[float] = []

    def send(self, frame: Frame) -> Frame:
        self.stamps.append(time.monotonic())
        return super().send(frame)


def _spread(values: list[float]) -> Spread:
    a = np.asarray(values)
    if a.size == 0:
        return Spread(p50=float("nan"), p99=float("nan"), n=0)
    return Spread(p50=float(np.percentile(a, 50)), p99=float(np.percentile(a, 99)), n=len(a))


def _request_to_motion(runtime: Runtime, driver: _StampedSim, trials: int) -> list[float]:
    attach_agent(runtime, audio_in="none")
    started = threading.Event()
    unsubscribe = runtime.events.subscribe(
        lambda e: started.set() if isinstance(e, MoveStarted) and e.name == "nod" else None,
        MoveStarted.kind,
    )
    out: list[float] = []
    try:
        for _ in range(trials):
            started.clear()
            t0 = time.monotonic()
            n0 = len(driver.stamps)
            runtime.execute(cmd.Ask(text="nod"))
            if not started.wait(5):
                continue
            time.sleep(0.1)
            moving = _first_moving_frame(driver, n0)
            if moving is not None:
                out.append((moving - t0) * 1e3)
            runtime.engine.wait_until_idle(5)
            time.sleep(0.1)
    finally:
        unsubscribe()
        runtime.detach_agent()
    return out


def _first_moving_frame(driver: _StampedSim, start: int) -> float | None:
    """When the first frame that differs from the one before it was sent (the motion began)."""
    frames = driver.history()
    stamps = driver.stamps
    offset = len(stamps) - len(frames)
    for i in range(max(start, offset + 1), len(stamps)):
        a, b = frames[i - offset - 1].values, frames[i - offset].values
        if float(np.abs(b - a).max()) > 1e-6:
            return stamps[i]
    return None


def run_agent_bench(trials: int = 20, *, hostile: bool = True) -> AgentBenchResult:
    listen = run_listen_bench(repeats=1)
    quiet = MotionConfig(breathing=BreathingConfig(enabled=False), blink=BlinkConfig(enabled=False))
    cfg = AnimaConfig(mqtt=MqttConfig(enabled=False), motion=quiet)  # only the gesture moves
    driver = _StampedSim()
    runtime = Runtime(cfg, driver=driver, audio_sink=NullSink(), tts=[ScriptedEngine()])
    runtime.start()
    try:
        motion = _request_to_motion(runtime, driver, trials)
        held = [s.held_s * 1e3 for s in measure_interrupt_latency(runtime, trials=trials)]
    finally:
        runtime.stop(ease=False)
    return AgentBenchResult(
        listen=listen,
        request_to_motion_ms=_spread(motion),
        interrupt_held_ms=_spread(held),
        hostile=run_hostile_planner_bench() if hostile else None,
    )


def _hostile_turn(
    runtime: Runtime, server: ScriptedOpenAIServer, name: str, scripted: Scripted
) -> HostileReply:
    """Ask once with ``scripted`` as the server's answer; wait for the spoken apology."""
    from anima.agent.planners.base import APOLOGY
    from anima.events import CommandRejected

    spoken = threading.Event()
    reasons: list[str] = []

    def seen(event: object) -> None:
        if isinstance(event, SpeechStarted) and event.text == APOLOGY:
            spoken.set()
        elif isinstance(event, CommandRejected) and event.source == "agent":
            reasons.append(event.reason)

    unsubscribe = runtime.events.subscribe(seen, SpeechStarted.kind, CommandRejected.kind)
    server.push(scripted)
    tracemalloc.start()
    try:
        t0 = time.monotonic()
        runtime.execute(cmd.Ask(text="nod"))
        heard = spoken.wait(60)
        turn = time.monotonic() - t0 if heard else float("nan")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
        unsubscribe()
    runtime.execute(cmd.StopSpeaking())  # the apology need not play out before the next
    return HostileReply(
        name=name, turn_s=turn, peak_mb=peak / 1e6, reason=reasons[0] if reasons else ""
    )


def run_hostile_planner_bench(timeout_s: float = 2.0) -> HostilePlannerResult:
    """The conversation against hostile replies on the real loop (see the module docstring)."""
    from anima.agent.conversation import Conversation
    from anima.agent.executor import Executor
    from anima.agent.planners.openai import OpenAIPlanner
    from anima.agent.vocabulary import robot_registry

    quiet = MotionConfig(breathing=BreathingConfig(enabled=False), blink=BlinkConfig(enabled=False))
    cfg = AnimaConfig(mqtt=MqttConfig(enabled=False), motion=quiet)
    runtime = Runtime(cfg, driver=SimDriver(), audio_sink=NullSink(), tts=[ScriptedEngine()])
    runtime.start()
    replies: list[HostileReply] = []
    try:
        with ScriptedOpenAIServer() as server:
            registry = robot_registry(runtime)
            planner = OpenAIPlanner(
                registry,
                base_url=server.base_url,
                model="bench",
                mode="json",
                timeout_s=timeout_s,
                events=runtime.events,
            )
            runtime.attach_agent(Conversation(runtime, registry, planner, Executor(runtime)))
            missed0 = runtime.engine.stats().missed
            try:
                dribbling = Scripted.json_reply("Sure.", ["play_animation('nod')"]).dribble(1.0)
                for name, scripted in (
                    ("a byte a second", dribbling),
                    ("50 MB, Content-Length", Scripted.huge(50_000_000)),
                    ("50 MB, no Content-Length", Scripted.huge(50_000_000, declare_length=False)),
                ):
                    replies.append(_hostile_turn(runtime, server, name, scripted))
                stats = runtime.engine.stats()
            finally:
                runtime.detach_agent()
    finally:
        runtime.stop(ease=False)
    return HostilePlannerResult(
        timeout_s=timeout_s,
        replies=tuple(replies),
        missed_ticks=stats.missed - missed0,
        period_error_max_ms=stats.period_error_max_ms,
    )
