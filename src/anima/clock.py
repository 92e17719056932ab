"""Time, injected.

The engine never calls ``time`` directly: it is given a :class:`Clock`. Production uses
:class:`MonotonicClock`; tests use :class:`anima.testing.FakeClock`, which they advance, so
scheduling tests are exact. Everything else that waits a while (the agent's steps, its
timeouts, idle life, the conversation's phases) waits on the same clock with
:meth:`Clock.wait`, or is called back by :class:`anima.timers.Timers` on it, so a test on a
fake clock decides when those seconds pass.
"""

from __future__ import annotations

import threading
import time
from typing import Protocol, runtime_checkable


@runtime_checkable
class Clock(Protocol):
    """A monotonic source of seconds that can also wait."""

    def now(self) -> float:
        """Seconds on a monotonic time base (the origin is arbitrary)."""
        ...

    def sleep_until(self, deadline: float, interrupt: threading.Event | None = None) -> bool:
        """Return at (or as soon as possible after) ``deadline``, at once if it passed (True);
        or as soon as ``interrupt`` is set (False): how the motion loop's sleep ends on its stop,
        also while a test holds a fake clock still."""
        ...

    def wait(self, event: threading.Event, timeout: float | None = None) -> bool:
        """Block until ``event`` is set (True) or ``timeout`` seconds pass on this clock
        (False; None waits for the event only)."""
        ...

    def wait_notified(self, cond: threading.Condition, timeout: float | None = None) -> bool:
        """With ``cond`` held: release it until it is notified (True) or ``timeout`` seconds pass
        on this clock (False; None waits for a notify only), then hold it again — a
        :meth:`threading.Condition.wait` whose timeout is on this clock."""
        ...


class MonotonicClock:
    """The production clock: ``time.monotonic`` with a precise wait.

    ``time.sleep`` wakes typically 50–150 µs late on Linux. To hold the loop's period error well
    under 0.5 ms, the wait sleeps until ``spin_s`` before the deadline and then spins on the
    clock for the rest: a few percent of one core at 100 Hz for ``spin_s=0.0003``.
    """

    def __init__(self, spin_s: float = 0.0003) -> None:
        self._spin_s = 0.0
        self.spin_s = spin_s

    @property
    def spin_s(self) -> float:
        """The final part of each wait spent spinning (s); settable (the motion thread drops it
        once its wake-ups are precise without it)."""
        return self._spin_s

    @spin_s.setter
    def spin_s(self, value: float) -> None:
        if not 0.0 <= value < 0.01:
            raise ValueError(f"spin_s must be in [0, 0.01) seconds, got {value!r}")
        self._spin_s = value

    def now(self) -> float:
        return time.monotonic()

    def sleep_until(self, deadline: float, interrupt: threading.Event | None = None) -> bool:
        # real time always passes: a sleep (at most the loop's period) ends by itself, so the
        # interrupt is only read after it; an Event.wait here would run Python code on waking,
        # each step a chance to wait for the GIL, where time.sleep takes it back once
        remaining = deadline - time.monotonic()
        if remaining > self._spin_s:
            time.sleep(remaining - self._spin_s)
        while time.monotonic() < deadline:
            time.sleep(0)  # yields the GIL so other threads are not starved while we spin
        return interrupt is None or not interrupt.is_set()

    def wait(self, event: threading.Event, timeout: float | None = None) -> bool:
        return event.wait(None if timeout is None else max(0.0, timeout))

    def wait_notified(self, cond: threading.Condition, timeout: float | None = None) -> bool:
        return cond.wait(None if timeout is None else max(0.0, timeout))
