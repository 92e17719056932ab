"""How fast an interrupt holds the motion: cancel → the tick that holds → the plan has ended.

For ``anima bench agent`` (the issue's target: ≤ 10 ms p99, against the seed's 100–200 ms of
polling). Each trial starts a plan whose first step is a long gesture, cancels it once the
gesture has started, and times three moments:

- ``held_s``: until the tick that replaced the gesture with a deceleration to a hold (the
  engine-clock time of its ``MoveFinished(reason="cleared")``, so dispatch is not counted);
- ``notified_s``: until that event reached a subscriber (what a front door would see);
- ``ended_s``: until the plan's task had finished (its remaining steps canceled).
"""

from __future__ import annotations

import random
import threading
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

from anima.agent.executor import Executor
from anima.agent.plan import parse_plan
from anima.agent.vocabulary import builtin_registry
from anima.errors import EngineStateError
from anima.events import Event, MoveFinished, MoveStarted

if TYPE_CHECKING:
    from anima.runtime import Runtime


@dataclass(frozen=True, kw_only=True)
class InterruptSample:
    held_s: float  # cancel → the tick that holds the motion (engine clock)
    notified_s: float  # cancel → the MoveFinished delivered to a subscriber
    ended_s: float  # cancel → the plan task finished


def measure_interrupt_latency(
    runtime: Runtime,
    *,
    trials: int = 20,
    animation: str = "LOOKUP_Waving",
    lead_s: float = 0.05,
    timeout_s: float = 5.0,
    seed: int = 0,
) -> list[InterruptSample]:
    """Interrupt ``trials`` plans on a started ``runtime``, ``lead_s`` into ``animation``."""
    registry = builtin_registry()
    executor = Executor(runtime, stop_on_failure=True)
    clock = runtime.engine.clock
    samples: list[InterruptSample] = []
    rng = random.Random(seed)
    started = threading.Event()
    held: list[tuple[float, float]] = []  # (event t, delivered at)
    held_event = threading.Event()

    def on_event(event: Event) -> None:
        if isinstance(event, MoveStarted) and event.name == animation:
            started.set()
        elif (
            isinstance(event, MoveFinished)
            and event.name == animation
            and event.reason == "cleared"
        ):
            held.append((event.t, clock.now()))
            held_event.set()

    unsubscribe = runtime.events.subscribe(on_event, MoveStarted.kind, MoveFinished.kind)
    try:
        for _ in range(trials):
            started.clear()
            held_event.clear()
            held.clear()
            plan = parse_plan(registry, [f"play_animation({animation!r})", "wait(30)"])
            task = executor.start(plan)
            if not started.wait(timeout_s):
                task.cancel("benchmark")
                raise EngineStateError(f"{animation} did not start within {timeout_s:g} s")
            # into the gesture, at a random phase of the tick (cancels are not tick-aligned)
            time.sleep(lead_s + rng.uniform(0.0, runtime.engine.period))
            t0 = clock.now()
            task.cancel("benchmark")
            if not held_event.wait(timeout_s):
                raise EngineStateError("the motion was not held after cancel")
            result = task.join(timeout_s)
            t_end = clock.now()
            if result is None:
                raise EngineStateError("the plan did not end after cancel")
            t_held, t_seen = held[0]
            samples.append(
                InterruptSample(
                    held_s=max(0.0, t_held - t0), notified_s=t_seen - t0, ended_s=t_end - t0
                )
            )
            runtime.engine.wait_until_idle(timeout_s)  # the deceleration ends before the next
    finally:
        unsubscribe()
        executor.close()
    return samples
