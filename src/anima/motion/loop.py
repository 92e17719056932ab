"""The motion loop: the engine's tick run at each absolute deadline, on its own thread.

:class:`MotionLoop` waits for each deadline of a :class:`~anima.motion.timer.LoopTimer`, calls
the tick with that nominal time and records what it cost. ``start()`` runs it on a dedicated
thread, raised to real-time priority where the OS allows it (:mod:`anima.motion.priority`);
``run(ticks)`` runs the same loop on the caller's thread, which on a ``FakeClock`` makes tests
and benchmarks exact. On the thread, a tick that raises is logged and reported as a fault and the
loop goes on: nothing a plug-in does stops the robot's loop. ``stop(timeout)`` is bounded.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

import numpy as np
from numpy.typing import NDArray

from anima.clock import Clock, MonotonicClock
from anima.errors import EngineStateError
from anima.motion.compiled import status as tick_status
from anima.motion.priority import enter_realtime
from anima.motion.timer import LoopStats, LoopTimer

log = logging.getLogger(__name__)


class MotionLoop:
    """Owns the motion thread and the loop's timing; the engine owns what a tick does."""

    def __init__(
        self,
        tick: Callable[[float], object],
        clock: Clock,
        period: float,
        *,
        window: int,
        realtime_priority: int,
        auto_spin: bool = False,
        fault: Callable[[str, str], None],
    ) -> None:
        self._tick = tick
        self._clock = clock
        self._timer = LoopTimer(clock, period, window)
        self._realtime_priority = realtime_priority
        self._auto_spin = auto_spin  # drop the clock's spin where wake-ups are precise anyway
        self._fault = fault
        self._thread: threading.Thread | None = None
        self._running = threading.Event()
        self._stopping = threading.Event()  # ends the loop's sleep: a stop needs no tick

    def start(self) -> None:
        """Run the loop on a dedicated thread."""
        if self._thread is not None:
            raise EngineStateError("motion engine already started")
        self._running.set()
        self._stopping.clear()
        self._thread = threading.Thread(target=self._loop, name="anima-motion", daemon=True)
        self._thread.start()
        log.info("motion tick: %s", tick_status())

    def stop(self, timeout: float = 1.0) -> None:
        """Stop the loop thread and wait for it (at most ``timeout`` seconds)."""
        thread = self._thread
        if thread is None:
            return
        self._running.clear()
        self._stopping.set()  # wakes the sleep, even on a fake clock a test holds still
        thread.join(timeout)
        if thread.is_alive():
            raise EngineStateError(f"motion loop did not stop within {timeout} s")
        self._thread = None

    @property
    def running(self) -> bool:
        return self._thread is not None and self._running.is_set()

    @property
    def thread(self) -> threading.Thread | None:
        """The motion thread while the loop runs on one."""
        return self._thread

    def run(self, ticks: int) -> None:
        """Run ``ticks`` ticks on the calling thread (tests and benchmarks; fake or real clock)."""
        timer, clock, tick = self._timer, self._clock, self._tick
        if timer.ticks == 0:
            timer.start()
        for _ in range(ticks):
            due = timer.wait()
            begin = clock.now()
            tick(due)
            timer.record_compute(clock.now() - begin)

    def _loop(self) -> None:
        precise = enter_realtime(self._realtime_priority, self._clock)  # where the OS allows
        if self._auto_spin and precise and isinstance(self._clock, MonotonicClock):
            self._clock.spin_s = 0.0
            log.info("motion thread: precise wake-ups without spinning")
        timer, clock, tick = self._timer, self._clock, self._tick
        timer.start()
        while self._running.is_set():
            due = timer.wait(self._stopping)
            if due is None:  # stopped while asleep
                break
            begin = clock.now()
            try:
                tick(due)
            except Exception as exc:  # the loop must survive anything a plug-in does
                log.exception("motion tick failed")
                self._fault("engine", f"tick failed: {exc!r}")
            timer.record_compute(clock.now() - begin)

    def stats(self) -> LoopStats:
        return self._timer.stats()

    @property
    def ticks(self) -> int:
        return self._timer.ticks

    def period_errors_since(self, tick: int) -> NDArray[np.float64]:
        """Each tick's lateness (s) since tick number ``tick`` (``stats().ticks`` then)."""
        return self._timer.errors_since(tick)
