"""Hand typed commands from front-door threads to the runtime without ever blocking them.

A front door's network thread (paho's, uvicorn's) calls :meth:`submit` and returns at once. One
worker thread, owned here, executes the commands in arrival order. Look-at requests are a
stream where only the latest matters: they go to a single slot that each new one overwrites, so a
1 kHz flood cannot build a backlog. Stop commands, the emergency stop and its reset jump the
queue, in their own arrival order (a reset sent after an estop never overtakes it); an
emergency stop also flushes everything ordered that was waiting (each flushed command is
reported as refused). Which of the three a command is, is a property of its type
(:class:`~anima.commands.Priority`). A door that answers on the same call (REST) passes a
``reply`` in the command's :class:`Origin`: it is told the verdict once, from the worker.
"""

from __future__ import annotations

import collections
import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass, field

from anima import commands as cmd
from anima.errors import AnimaError
from anima.events import CommandRejected, EventHub

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Origin:
    """Where a command came from, for error reports (e.g. the MQTT topic)."""

    source: str  # "mqtt", "rest", …
    where: str  # topic or path
    excerpt: str = ""  # of the payload
    # told the verdict once, on the worker's thread (or the submitter's, when the queue is
    # full): None when executed (or merged into a newer look-at or estop), else the refusal's
    # reason; a command still waiting when the worker stops is never told
    reply: Callable[[str | None], None] | None = field(default=None, compare=False, repr=False)


Executor = Callable[[cmd.Command], object]


class CommandDispatcher:
    def __init__(self, execute: Executor, events: EventHub, *, max_pending: int = 1000) -> None:
        self._execute = execute
        self._events = events
        self._max = max_pending
        self._cond = threading.Condition()
        self._pending: collections.deque[tuple[cmd.Command, Origin]] = collections.deque()
        # stops, the emergency stop and its reset: before the ordered ones, in their own order
        self._system: collections.deque[tuple[cmd.Command, Origin]] = collections.deque()
        self._look: tuple[cmd.Command, Origin] | None = None  # the newest LATEST command
        self._running = False
        self._thread: threading.Thread | None = None
        self.executed = 0
        self.coalesced = 0

    def start(self) -> None:
        with self._cond:
            if self._thread is not None:
                return
            self._running = True
            self._thread = threading.Thread(target=self._run, name="anima-commands", daemon=True)
            self._thread.start()

    def stop(self, timeout: float = 2.0) -> None:
        with self._cond:
            self._running = False
            self._cond.notify_all()
        if self._thread is not None:
            self._thread.join(timeout)
            self._thread = None

    def submit(self, command: cmd.Command, origin: Origin) -> None:
        """Queue ``command`` by its type's :class:`~anima.commands.Priority`; never blocks. A
        full queue refuses an ordered one with an error event."""
        with self._cond:
            match command.priority:
                case cmd.Priority.LATEST:
                    if self._look is not None:
                        self.coalesced += 1
                        _tell(self._look[1], None)  # merged into this newer one
                    self._look = (command, origin)
                case cmd.Priority.SYSTEM:
                    if isinstance(command, cmd.EmergencyStop):
                        self._flush(origin)
                    self._system.append((command, origin))
                case cmd.Priority.ORDERED:
                    if len(self._pending) >= self._max:
                        self._reject(origin, f"too many pending commands ({self._max}); try again")
                        return
                    self._pending.append((command, origin))
            self._cond.notify()

    def _flush(self, origin: Origin) -> None:
        """An emergency stop: what waited behind it is refused (an estop already waiting is
        the same stop, merged: MQTT's estop lane and the door both deliver it)."""
        flushed, self._pending = list(self._pending), collections.deque()
        if self._look is not None:  # a gaze dropped, not reported: the next look-at replaces it
            _tell(self._look[1], "flushed by an emergency stop")
        self._look = None
        for c, o in self._system:
            if isinstance(c, cmd.EmergencyStop):
                _tell(o, None)  # merged into this one
        self._system = collections.deque(
            (c, o) for c, o in self._system if not isinstance(c, cmd.EmergencyStop)
        )
        for _, where in flushed:
            self._reject(where, "flushed by an emergency stop")

    def _reject(self, origin: Origin, reason: str, command: str = "") -> None:
        log.warning("%s %s refused: %s", origin.source, origin.where, reason)
        _tell(origin, reason)
        self._events.publish(
            CommandRejected(
                command=command or origin.where,
                argument=origin.excerpt,
                reason=reason,
                source=origin.source,
            )
        )

    def _next(self) -> tuple[cmd.Command, Origin] | None:
        with self._cond:
            while self._running and not self._system and not self._pending and self._look is None:
                self._cond.wait()
            if not self._running:
                return None
            if self._system:
                return self._system.popleft()
            if self._pending:
                return self._pending.popleft()
            item, self._look = self._look, None
            return item

    def _run(self) -> None:
        while True:
            item = self._next()
            if item is None:
                return
            command, origin = item
            try:
                self._execute(command)
                self.executed += 1
                _tell(origin, None)
            except AnimaError as exc:
                self._reject(origin, str(exc))
            except Exception as exc:  # a bug must cost one command, not the front door
                log.exception("command %r failed", command)
                self._reject(origin, f"internal error: {exc!r}")


def _tell(origin: Origin, reason: str | None) -> None:
    if origin.reply is not None:
        try:
            origin.reply(reason)
        except Exception:  # a door's reply must not cost the worker
            log.exception("the reply to %s %s failed", origin.source, origin.where)
