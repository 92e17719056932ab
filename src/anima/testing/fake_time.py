"""The whole runtime on a fake clock, stepped from the test.

:class:`FakeTimeRobot` is the runtime :func:`anima.build.build` makes from a config (the same
parts ``anima serve`` runs, doors left out), on a :class:`~anima.testing.FakeClock`, with a
scripted TTS engine, a null sink playing on that clock, and, when given, a scripted planner
for the agent. Its motion loop, event hub and timers have no thread: :meth:`advance` runs the
exact ticks of the time asked for, each followed by the events it published and the timers it
made due (idle life's full blink, the conversation's phases). Nothing moves between calls.

Speech's worker and the agent keep their threads; they wait on the fake clock too, so their
seconds pass only when the test advances it. Before each tick the harness waits for speech's
worker to finish any synthesis under way (audio is made in no time, and plays on the fake
clock). :meth:`settle` waits (in real time, bounded) for another thread to get somewhere
without moving the clock, delivering its events meanwhile; it is woken each time a thread begins
or ends a wait on the clock::

    planner = ScriptedPlanner({"wave": reply("Hi!", "play_animation('nod')")})
    with FakeTimeRobot(planner=planner) as robot:
        robot.execute(cmd.Ask(text="wave"))
        robot.settle(lambda: robot.runtime.moving)       # the agent's thread queued the nod
        robot.advance(1.0)                               # one second: 100 ticks ("Hi!" ends)
        robot.advance_until(MoveFinished, within=3.0)    # on to the end of the nod
        robot.settle_for("plan_finished")                # the executor's thread ends the plan

The rule: :meth:`advance` and :meth:`advance_until` for what the loop does (moves, lips, the
timers); :meth:`settle` for what a thread does next. :meth:`advance_until` runs ticks as fast
as it can, so a thread's work (the agent's next step) must be settled before fake time runs on.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Sequence
from types import TracebackType
from typing import TypeVar, overload

from anima import commands as cmd
from anima.agent.planners.base import Planner
from anima.body import Body
from anima.build import build
from anima.config import AnimaConfig
from anima.drivers.sim import SimDriver
from anima.events import Event
from anima.runtime import Runtime
from anima.speech.base import TTSEngine
from anima.speech.sinks import NullSink
from anima.testing.clock import FakeClock
from anima.testing.events import EventRecorder, Match
from anima.testing.tts import ScriptedEngine

E = TypeVar("E", bound=Event)

SETTLE_RECHECK_S = 0.02  # settle() asks again at least this often (real s): a thread may get
# somewhere without touching the clock (publish an event, then block on its queue)
SYNTHESIS_TIMEOUT_S = 30.0  # longest real wait for speech's worker before a tick


class FakeTimeRobot:
    """A runtime built by :func:`~anima.build.build` on a :class:`FakeClock`, stepped by hand."""

    def __init__(
        self,
        config: AnimaConfig | None = None,
        *,
        planner: Planner | None = None,
        tts: Sequence[TTSEngine] | None = None,
        body: Body | None = None,
        history: int = 100_000,
        start: float = 1000.0,
    ) -> None:
        """``planner``: the agent's (the agent is enabled for it, with no audio in).
        ``history``: frames the simulated driver keeps (``driver.history``)."""
        cfg = config or AnimaConfig()
        if planner is not None and not cfg.agent.enabled:
            cfg = dataclasses.replace(cfg, agent=dataclasses.replace(cfg.agent, enabled=True))
        self.clock = FakeClock(start)
        self.sink = NullSink(self.clock)  # plays on the fake clock: lips follow the ticks
        self.driver = SimDriver(history=history)
        self.planner = planner
        self.runtime: Runtime = build(
            cfg,
            doors=False,
            audio_in="none",
            body=body,
            driver=self.driver,
            clock=self.clock,
            tts=list(tts) if tts is not None else [ScriptedEngine()],
            audio_sink=self.sink,
            planner=planner,
            report=lambda _line: None,
        )
        self.recorder = EventRecorder().attach(self.runtime.events)
        self._started = False

    # ------------------------------------------------------------------ lifecycle
    def start(self) -> FakeTimeRobot:
        self.runtime.start(stepped=True)
        self._started = True
        return self

    def close(self) -> None:
        if self._started:
            self._started = False
            self.runtime.stop(ease=False)

    def __enter__(self) -> FakeTimeRobot:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    # ------------------------------------------------------------------ time
    @property
    def period(self) -> float:
        """Seconds per tick (``motion.rate_hz``)."""
        return 1.0 / self.runtime.config.motion.rate_hz

    @property
    def now(self) -> float:
        return self.clock.now()

    def advance(self, seconds: float) -> int:
        """Run the ticks of ``seconds`` (rounded to whole ticks), each followed by its events
        and due timers; returns how many ran."""
        if seconds < 0:
            raise ValueError(f"cannot advance by {seconds!r} s")
        ticks = round(seconds / self.period)
        for _ in range(ticks):
            self._tick()
        return ticks

    def _tick(self) -> None:
        speech = self.runtime.speech
        self.settle(
            lambda: self.clock.quiet() and (speech is None or not speech.synthesizing),
            timeout=SYNTHESIS_TIMEOUT_S,
        )
        self.runtime.step()

    @overload
    def advance_until(self, match: type[E], *, within: float, since: int | None = None) -> E: ...
    @overload
    def advance_until(self, match: Match, *, within: float, since: int | None = None) -> Event: ...

    def advance_until(self, match: Match, *, within: float, since: int | None = None) -> Event:
        """Tick until an event matches (after ``since``, default now), at most ``within``
        fake seconds; the event, or AssertionError naming what came instead."""
        start = self.recorder.mark() if since is None else since
        for _ in range(max(1, round(within / self.period))):
            self._tick()
            hits = self.recorder.of(match, since=start)
            if hits:
                return hits[0]
        kinds = sorted({e.kind for e in self.recorder.events[start:]})
        raise AssertionError(
            f"no matching event within {within:g} s of fake time "
            f"(came: {', '.join(kinds) or 'none'})"
        )

    def settle(self, until: Callable[[], object], *, timeout: float = 5.0) -> None:
        """Without moving the clock, deliver events until ``until()`` is true — a thread (the
        agent, speech) has got where the test expects; AssertionError after ``timeout`` real
        seconds."""
        end = time.monotonic() + timeout
        while True:
            self.runtime.events.drain()
            if until():
                return
            left = end - time.monotonic()
            if left <= 0:
                raise AssertionError(f"not settled within {timeout:g} s: {until!r}")
            self.clock.changed(min(left, SETTLE_RECHECK_S))  # a thread began or ended a wait

    @overload
    def settle_for(self, match: type[E], *, timeout: float = 5.0, since: int = 0) -> E: ...
    @overload
    def settle_for(self, match: Match, *, timeout: float = 5.0, since: int = 0) -> Event: ...

    def settle_for(self, match: Match, *, timeout: float = 5.0, since: int = 0) -> Event:
        """Without moving the clock, the first event after ``since`` that matches (published by
        a thread); AssertionError after ``timeout`` real seconds."""
        self.settle(lambda: self.recorder.of(match, since=since), timeout=timeout)
        return self.recorder.of(match, since=since)[0]

    # ------------------------------------------------------------------ the robot
    def execute(self, command: cmd.Command) -> cmd.Result:
        """The runtime's :meth:`~anima.runtime.Runtime.execute` (every front door's path)."""
        return self.runtime.execute(command)
