"""Keeping the motion thread on time while the rest of the process is busy.

The loop's own work is ~0.2 ms a tick; what makes it late is waiting — for the interpreter lock
while another thread runs Python, and for a CPU while other threads and processes use both
cores. Two levers, measured with ``anima bench hostile`` (MQTT flood, 1 MB planner replies and
Piper synthesizing at once, 2 cores):

- the interpreter's **switch interval**: a thread that waits for the GIL gets it after at most
  this long. Python's default, 5 ms, let busy threads delay a tick by half a period each time
  it needed the lock back: 14–21 missed ticks, gaps up to 38 ms. At 1 ms: 1–5 missed.
- **real-time scheduling** of the motion thread (``SCHED_FIFO``), where the OS permits it
  (root, ``CAP_SYS_NICE`` or an ``RLIMIT_RTPRIO`` limit): the kernel runs it as soon as its wait
  ends instead of after whatever else holds the core. With both: 0–1 missed, no gap over 20 ms.
  The loop sleeps between ticks, so a real-time thread takes ~3 % of one core; the kernel's
  real-time throttling bounds it in any case.

And one saving: the clock used to spin the last 0.3 ms before each deadline, for wake-ups a few
µs late: half the loop's CPU (5.3 % of the process against 2.9 %). A real-time thread, or a
normal one with a 1 µs timer slack (Linux's default, 50 µs, lets the kernel end a sleep late to
batch wake-ups), wakes with a p99 of 0.08-0.31 ms without it, well within the 0.5 ms the loop is
held to: ``motion.spin_s: null`` (auto) drops the spin there (docs/motion.md has the table).
"""

from __future__ import annotations

import ctypes
import gc
import logging
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager

from anima.clock import Clock, MonotonicClock

log = logging.getLogger(__name__)


AUTO_SPIN_S = 0.0003  # the spin where a thread's wake-ups are not known to be precise
TIMER_SLACK_NS = 1000  # the motion thread's timer slack (Linux's default: 50 µs)


def enter_realtime(priority: int, clock: Clock) -> bool:
    """Called on the motion thread as its loop starts: ``SCHED_FIFO`` at ``priority`` (0: no),
    and a 1 µs timer slack, only when ``clock`` is the real one — on a fake clock a real-time
    thread would spin a core. Logs what it got; True when the thread's wake-ups are precise
    without spinning (either of the two took)."""
    if not isinstance(clock, MonotonicClock):
        return False
    slack = set_timer_slack(TIMER_SLACK_NS)
    if priority <= 0:
        return slack
    why_not = make_realtime(priority)
    if why_not is None:
        log.info("motion thread: real-time priority %d (SCHED_FIFO)", priority)
        return True
    log.info("motion thread: normal priority, %s", why_not)
    return slack


def set_timer_slack(nanoseconds: int) -> bool:
    """The calling thread's timer slack (Linux ``PR_SET_TIMERSLACK``): how late the kernel may
    make its sleeps end to batch wake-ups. True when set."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return bool(libc.prctl(PR_SET_TIMERSLACK, nanoseconds, 0, 0, 0) == 0)
    except (OSError, AttributeError):
        return False


PR_SET_TIMERSLACK = 29  # linux/prctl.h


def make_realtime(priority: int) -> str | None:
    """Give the calling thread ``SCHED_FIFO`` at ``priority``; None when done, else why not."""
    if not hasattr(os, "sched_setscheduler"):
        return "this OS has no SCHED_FIFO"
    try:
        # pid 0 is the calling thread: Linux schedules threads, not processes
        os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(priority))
    except (OSError, ValueError) as exc:
        return f"SCHED_FIFO not permitted ({exc.strerror if isinstance(exc, OSError) else exc})"
    return None


class SwitchInterval:
    """Sets the interpreter's switch interval while a runtime runs; ``restore()`` puts it back."""

    def __init__(self, interval_ms: float | None) -> None:
        self.interval_ms = interval_ms
        self._previous: float | None = None

    def apply(self) -> None:
        if self.interval_ms is None or self._previous is not None:
            return
        self._previous = sys.getswitchinterval()
        sys.setswitchinterval(self.interval_ms / 1000.0)
        log.debug("switch interval %.1f ms (was %.1f ms)", self.interval_ms, 1000 * self._previous)

    def restore(self) -> None:
        if self._previous is not None:
            sys.setswitchinterval(self._previous)
            self._previous = None


@contextmanager
def collector_paused() -> Iterator[None]:
    """The cyclic garbage collector off while a runtime starts beside its running loop, then
    everything loaded frozen out of its reach (``gc.freeze``) and the collector back on.

    Importing the doors and loading the models allocates hundreds of thousands of objects, and
    the full passes that triggered held the interpreter 30-50 ms each: 4-5 ticks missed in every
    start (``anima serve``'s web door importing the MCP SDK), 0 with the collector paused. What
    start loaded lives as long as the process, so frozen it costs later passes nothing (before,
    a full pass over it took ~15 ms and cost a tick). The collector is left off if it was off.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
        gc.freeze()
    finally:
        if was_enabled:
            gc.enable()
