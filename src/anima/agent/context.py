"""What a running action gets: the robot, the plan's cancel signal, event-driven waits.

Interruption is a :class:`threading.Event` plus hooks run at the moment of cancel, never a
flag checked every 0.1–0.2 s (the seed's loops). Every wait here returns as soon as either the
awaited thing happens or the plan is canceled, and its time is the robot's clock (a fake one
in a test: the seconds pass when the test advances it)::

    with ctx.events(MoveFinished.kind) as inbox:
        ctx.robot.execute(cmd.PlayAnimation(name="nod"))
        done = inbox.wait(lambda e: e.name == "nod", ctx.step_timeout_s)
    if done is None:  # canceled or timed out: ctx.canceled says which
        ...
"""

from __future__ import annotations

import itertools
import logging
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING

from anima.agent.process import ManagedProcess
from anima.events import Event

if TYPE_CHECKING:
    from anima.agent.port import RobotPort

log = logging.getLogger(__name__)


class Inbox:
    """Events of some kinds, collected from the moment it opens, until a match or a cancel."""

    def __init__(self, ctx: ActionContext, kinds: Sequence[str]) -> None:
        self._ctx = ctx
        self._events: list[Event] = []
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._unsubscribe = ctx.robot.subscribe(self._on_event, *kinds)
        self._unhook = ctx.on_cancel(self._wake.set)

    def _on_event(self, event: Event) -> None:
        with self._lock:
            self._events.append(event)
        self._wake.set()

    def wait(self, match: Callable[[Event], bool], timeout: float | None = None) -> Event | None:
        """The first collected event that matches; None when canceled or after ``timeout``."""
        clock = self._ctx.robot.clock
        deadline = None if timeout is None else clock.now() + timeout
        while True:
            with self._lock:
                for i, event in enumerate(self._events):
                    if match(event):
                        del self._events[: i + 1]
                        return event
                self._events.clear()
                self._wake.clear()  # under the lock: an event arriving now sets it again
            if self._ctx.canceled:
                return None
            remaining = None if deadline is None else deadline - clock.now()
            if remaining is not None and remaining <= 0:
                return None
            clock.wait(self._wake, remaining)

    def close(self) -> None:
        self._unsubscribe()
        self._unhook()

    def __enter__(self) -> Inbox:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


class ActionContext:
    """Handed to every action of one plan; the executor cancels it to interrupt the plan."""

    def __init__(
        self,
        robot: RobotPort,
        *,
        locale: str = "en-US",
        step_timeout_s: float = 60.0,
        process_timeout_s: float = 2.0,
        halt: Callable[[], None] | None = None,
    ) -> None:
        """``halt`` runs first at cancel, right after the event is set (the executor passes
        the runtime's ``StopAnimation``: holding the motion comes before anything else)."""
        self.robot = robot  # every command through robot.execute, as the front doors'
        self._halt = halt
        self.locale = locale  # what say() speaks in
        self.step_timeout_s = step_timeout_s  # longest wait for one completion event
        self.process_timeout_s = process_timeout_s  # SIGTERM → SIGKILL grace for programs
        self.finished = False  # set by finish(): the task is over, the conversation resets
        self.gestures = 0  # gesture markers this plan's say steps started (MAX_REPLY_GESTURES)
        self.cancel_reason = ""
        self._cancel = threading.Event()
        self._lock = threading.Lock()
        self._hooks: dict[int, Callable[[], None]] = {}
        self._ids = itertools.count()
        self._processes: list[ManagedProcess] = []

    # ------------------------------------------------------------------ cancel
    @property
    def canceled(self) -> bool:
        return self._cancel.is_set()

    @property
    def cancel_event(self) -> threading.Event:
        """Set when the plan is canceled (to hand to code that takes an Event)."""
        return self._cancel

    def cancel(self, reason: str = "interrupted") -> None:
        """Interrupt: set the event, then run every hook (on the caller's thread). Once."""
        with self._lock:
            if self._cancel.is_set():
                return
            self.cancel_reason = reason
            self._cancel.set()  # before the hooks: whoever they wake sees it is canceled
            hooks = list(self._hooks.values())
        if self._halt is not None:
            hooks.insert(0, self._halt)
        for hook in hooks:
            try:
                hook()
            except Exception:
                log.exception("cancel hook %r failed", hook)

    def on_cancel(self, hook: Callable[[], None]) -> Callable[[], None]:
        """Run ``hook`` at cancel (at once when already canceled); returns its remover."""
        with self._lock:
            if not self._cancel.is_set():
                key = next(self._ids)
                self._hooks[key] = hook

                def remove() -> None:
                    with self._lock:
                        self._hooks.pop(key, None)

                return remove
        hook()
        return lambda: None

    # ------------------------------------------------------------------ waiting
    def sleep(self, seconds: float) -> bool:
        """Wait ``seconds`` on the robot's clock; True when they passed, False when canceled
        first."""
        return not self.robot.clock.wait(self._cancel, max(0.0, seconds))

    def events(self, *kinds: str) -> Inbox:
        """Collect events of ``kinds`` from now on (open it *before* the command)."""
        return Inbox(self, kinds)

    def finish(self) -> None:
        """End the task: the rest of the plan is dropped and the conversation resets."""
        self.finished = True

    # ------------------------------------------------------------------ external programs
    def spawn(
        self,
        argv: Sequence[str],
        *,
        cwd: str | Path | None = None,
        env: dict[str, str] | None = None,
    ) -> ManagedProcess:
        """Start a program in its own process group. Cancel signals the group at once, and the
        executor stops it (SIGTERM, then SIGKILL) when the step ends, however it ends."""
        proc = ManagedProcess(argv, cwd=cwd, env=env, term_timeout_s=self.process_timeout_s)
        with self._lock:
            self._processes.append(proc)
        proc.start()
        self.on_cancel(proc.terminate)
        return proc

    def wait_process(self, proc: ManagedProcess, timeout: float | None = None) -> int | None:
        """The program's exit code; None when canceled or still running after ``timeout``."""
        wake = threading.Event()
        proc.on_exit(wake.set)
        unhook = self.on_cancel(wake.set)
        try:
            wake.wait(timeout)
        finally:
            unhook()
        return proc.returncode if proc.exited.is_set() else None

    def reap(self) -> None:
        """Stop every program started by the step that just ended (the executor calls it)."""
        with self._lock:
            procs, self._processes = self._processes, []
        for proc in procs:
            try:
                proc.stop()
            except Exception:
                log.exception("could not stop %s", proc.argv)
