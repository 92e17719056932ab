"""A fake :class:`~anima.clock.Clock`: seconds pass when the test says so, or, with
``autojump``, as soon as every thread that waits on the clock is blocked.

Two ways to use it:

- **Stepped** (the default): the test moves time with :meth:`FakeClock.advance`;
  ``sleep_until`` jumps straight to its deadline (one thread stepping a loop runs as fast as it
  can); ``wait`` blocks until its event is set or the test has advanced past its timeout.
- **Autojump** (``FakeClock(autojump=True)``), as trio's ``MockClock(autojump_threshold=0)``
  does it: threads wait on the clock as on a real one, and when every thread that has waited on
  it is blocked — on the clock, a queue, a lock, an event or an idle selector — the clock jumps to
  the earliest deadline any of them waits for. A whole runtime (its motion loop, speech worker,
  agent, timers) then runs on fake time at the speed of its CPU work: a test of ten seconds of
  behaviour takes a fraction of a second, and a thread that is computing or waiting for a reply
  on a socket holds the clock until it blocks again.

Waits are signalled, not polled: setting the event wakes its waiter at once, and moving the
clock wakes exactly the waits it made due. Only the autojump watcher looks at the threads, and
only while some wait has a deadline.
"""

from __future__ import annotations

import contextlib
import gc
import selectors
import socket
import sys
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from types import CodeType, FrameType

WATCH_POLL_S = 0.0005  # how often the autojump watcher looks again while a thread works (real s)
WATCH_LINGER_S = 1.0  # the watcher ends after this long (real s) with no wait on the clock


def _idle_codes() -> frozenset[CodeType]:
    """The code objects a blocked thread's innermost Python frame is in: a condition's wait (a
    queue, an event, a semaphore), a join, an idle selector (an asyncio loop), an accept."""
    codes = {threading.Condition.wait.__code__, threading.Thread.join.__code__}
    for name in ("SelectSelector", "PollSelector", "EpollSelector", "DevpollSelector"):
        kind = getattr(selectors, name, None)  # the selectors this platform has
        if kind is not None:
            codes.add(kind.select.__code__)
    codes.add(socket.socket.accept.__code__)
    lock_wait = getattr(threading.Thread, "_wait_for_tstate_lock", None)  # join's inner wait
    if lock_wait is not None:
        codes.add(lock_wait.__code__)
    return frozenset(codes)


_IDLE_CODES = _idle_codes()


def _current_frames() -> dict[int, FrameType]:
    """``sys._current_frames()`` with the collector off: CPython 3.11 builds that dict holding
    the thread list's lock, and a collection there may run a finalizer that lets go of the GIL
    (a paho client's socket close) while a thread that ends waits for that lock with the GIL:
    a deadlock (python/cpython#106883, seen here in an MQTT test on autojump)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        return sys._current_frames()
    finally:
        if enabled:
            gc.enable()


def _blocked(frame: FrameType) -> bool:
    return frame.f_code in _IDLE_CODES


@dataclass(eq=False)
class _Wait:
    """One thread's wait on the clock: until ``deadline`` (None: no deadline), or until
    ``event`` is set (a sleep has none)."""

    deadline: float | None
    event: threading.Event | None
    cond: threading.Condition | None = None  # a wait_notified's condition
    sleep: bool = False  # a sleep_until that an event may end early


class FakeClock:
    """``now()`` moves only when told (:meth:`advance`) or, with ``autojump``, when every
    thread waiting on it is blocked. ``sleep_until(d)`` wakes at ``d + overshoot(d)``.

    ``overshoot`` returns how late a wait wakes (seconds); the default wakes exactly on time.
    Every ``sleep_until`` is recorded in ``waits`` (the deadlines asked for), for exact
    scheduling tests.
    """

    def __init__(
        self,
        start: float = 1000.0,
        overshoot: Callable[[float], float] | None = None,
        *,
        autojump: bool = False,
    ) -> None:
        self._now = start
        self._overshoot = overshoot or (lambda _deadline: 0.0)
        self._autojump = autojump
        self._lock = threading.Lock()
        self._moved = threading.Condition(self._lock)  # the time moved, or a wait began or ended
        self._waits: set[_Wait] = set()
        self._threads: set[int] = set()  # idents of the threads that have waited on the clock
        self._watcher: threading.Thread | None = None
        self._closed = False
        self._holds = 0  # hold() blocks: no jump while a test sets something up
        self.waits: list[float] = []

    @property
    def autojump(self) -> bool:
        return self._autojump

    def now(self) -> float:
        return self._now  # one float read: atomic, no lock needed

    # ------------------------------------------------------------------ moving time
    def advance(self, seconds: float) -> None:
        """Move the clock ``seconds`` forward, waking every wait it makes due."""
        if seconds < 0:
            raise ValueError("a monotonic clock cannot go back")
        with self._lock:
            due = self._move_to(self._now + seconds)
        self._wake(due)

    def _move_to(self, when: float) -> list[_Wait]:
        """With the lock held: set the time and return the waits now due."""
        self._now = max(self._now, when)
        self._moved.notify_all()
        return [w for w in self._waits if w.deadline is not None and w.deadline <= self._now]

    @staticmethod
    def _wake(due: list[_Wait]) -> None:
        for w in due:
            cond = w.cond if w.cond is not None else _condition_of(w.event)
            if cond is not None:
                with cond:
                    cond.notify_all()

    # ------------------------------------------------------------------ waiting
    def sleep_until(self, deadline: float, interrupt: threading.Event | None = None) -> bool:
        """Wake at ``deadline`` plus its overshoot (True), or when ``interrupt`` is set (False):
        stepped, the sleep is the time passing; with autojump, a held clock still lets an
        interrupt end the sleep (a runtime stops while a test holds its time)."""
        if interrupt is not None and interrupt.is_set():
            return False
        late = max(0.0, self._overshoot(deadline))
        if not self._autojump:  # stepped: the sleep is the time passing
            with self._lock:
                self.waits.append(deadline)
                due = self._move_to(max(self._now, deadline) + late)
            self._wake(due)
            return True
        wake_at = deadline + late
        with self._lock:
            self.waits.append(deadline)
            # a thread that asks is one of the clock's from now on, though this sleep is over
            # already: busy from here to its next wait (a camera rendering its first frame),
            # it holds the clock as every waiter does (before, the clock jumped ahead of it)
            self._threads.add(threading.get_ident())
            if self._now >= wake_at:
                return True
        if interrupt is not None:  # woken by the event's own condition, or when due
            return not self._wait_for(interrupt, _Wait(wake_at, interrupt, sleep=True))
        with self._lock:
            wait = _Wait(wake_at, None)
            self._begin(wait)
            try:
                while self._now < wake_at and not self._closed:
                    self._moved.wait()
            finally:
                self._end(wait)
        return True

    def wait(self, event: threading.Event, timeout: float | None = None) -> bool:
        """Block until ``event`` is set (True) or the clock has passed ``timeout`` (False)."""
        with self._lock:
            deadline = None if timeout is None else self._now + max(0.0, timeout)
        return self._wait_for(event, _Wait(deadline, event))

    def _wait_for(self, event: threading.Event, wait: _Wait) -> bool:
        """Block until ``event`` is set (True) or the clock passes ``wait.deadline`` (False)."""
        deadline = wait.deadline
        with self._lock:
            self._begin(wait)
        try:
            cond = _condition_of(event)
            if cond is None:  # not a threading.Event: no condition to be woken on
                return self._poll(event, deadline)
            with cond:
                while not event.is_set():
                    if (deadline is not None and self._now >= deadline) or self._closed:
                        return False
                    cond.wait()
                return True
        finally:
            with self._lock:
                self._end(wait)

    def wait_notified(self, cond: threading.Condition, timeout: float | None = None) -> bool:
        """With ``cond`` held: release it until it is notified (True) or the clock has passed
        ``timeout`` (False), then hold it again."""
        with self._lock:
            deadline = None if timeout is None else self._now + max(0.0, timeout)
            if deadline is not None and self._now >= deadline:
                return False
            wait = _Wait(deadline, None, cond)
            self._begin(wait)
        try:
            cond.wait()  # notified by its owner, or by the clock when the deadline is due
            return not ((deadline is not None and self._now >= deadline) or self._closed)
        finally:
            with self._lock:
                self._end(wait)

    def _poll(self, event: threading.Event, deadline: float | None) -> bool:
        while not event.wait(WATCH_POLL_S):
            if (deadline is not None and self._now >= deadline) or self._closed:
                return False
        return True

    def _begin(self, wait: _Wait) -> None:
        """With the lock held: count a wait (and its thread), start the watcher if it jumps."""
        self._waits.add(wait)
        self._threads.add(threading.get_ident())
        self._moved.notify_all()
        if self._autojump and self._watcher is None and not self._closed:
            self._watcher = threading.Thread(
                target=self._watch, name="fake-clock-autojump", daemon=True
            )
            self._watcher.start()

    def _end(self, wait: _Wait) -> None:
        self._waits.discard(wait)
        self._moved.notify_all()

    @property
    def waiting(self) -> int:
        """How many threads are blocked in :meth:`wait` now (sleeps and condition waits are
        not counted)."""
        with self._lock:
            return sum(1 for w in self._waits if w.event is not None and not w.sleep)

    def changed(self, timeout: float) -> bool:
        """Block until the time moves or a wait on the clock begins or ends (True), or
        ``timeout`` real seconds pass (False): how a test waits for a thread to get somewhere."""
        with self._lock:
            return self._moved.wait(timeout)

    # ------------------------------------------------------------------ autojump
    @contextlib.contextmanager
    def hold(self) -> Iterator[None]:
        """No autojump inside this block: a test starts threads that wait on the clock, and
        only once all are waiting lets time move (a thread counts from its first wait)."""
        with self._lock:
            self._holds += 1
        try:
            yield
        finally:
            with self._lock:
                self._holds -= 1
                self._moved.notify_all()

    def quiet(self) -> bool:
        """Every other thread that has waited on this clock is blocked now (or has ended), and
        no :meth:`hold` is on."""
        frames = _current_frames()  # the one view of where each thread is
        with self._lock:
            if self._holds:
                return False
            if any(self._woken(w) for w in self._waits):
                return False  # its thread was woken and is about to run
            threads = list(self._threads)
        me = threading.get_ident()
        for ident in threads:
            if ident == me:
                continue
            frame = frames.get(ident)
            if frame is None:
                with self._lock:
                    self._threads.discard(ident)  # that thread has ended
            elif not _blocked(frame):
                return False
        return True

    def _woken(self, w: _Wait) -> bool:
        """With the lock held: ``w`` is over (its event set, its deadline passed), but its
        thread has not yet left it."""
        return (w.event is not None and w.event.is_set()) or (
            w.deadline is not None and w.deadline <= self._now
        )

    def _watch(self) -> None:
        """The autojump watcher: while some wait has a deadline, jump to the earliest one
        whenever every waiting thread is blocked."""
        idle_since: float | None = None
        while True:
            with self._lock:
                if self._closed:
                    self._watcher = None
                    return
                deadlines = [w.deadline for w in self._waits if w.deadline is not None]
                if not deadlines:
                    if idle_since is None:
                        idle_since = _real_now()
                    elif _real_now() - idle_since > WATCH_LINGER_S:
                        self._watcher = None  # the next wait starts another
                        return
                    self._moved.wait(WATCH_POLL_S * 20)
                    continue
                idle_since = None
            if self.quiet():
                with self._lock:
                    pending = [w.deadline for w in self._waits if w.deadline is not None]
                    # a wait already due has been woken: its thread runs before time moves on
                    due = (
                        self._move_to(min(pending)) if pending and min(pending) > self._now else []
                    )
                self._wake(due)
                if due:
                    continue
            with self._lock:
                self._moved.wait(WATCH_POLL_S)

    def close(self) -> None:
        """Stop the autojump watcher and release every wait (they return as timed out)."""
        with self._lock:
            self._closed = True
            self._moved.notify_all()
            waits = list(self._waits)
        self._wake(waits)

    def __enter__(self) -> FakeClock:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()


def _condition_of(event: threading.Event | None) -> threading.Condition | None:
    """The condition a :class:`threading.Event` sets and waits on (CPython's ``_cond``): waiting
    on it lets the clock wake an event's waiter without setting the event."""
    cond = getattr(event, "_cond", None)
    return cond if isinstance(cond, threading.Condition) else None


def _real_now() -> float:
    import time

    return time.monotonic()
