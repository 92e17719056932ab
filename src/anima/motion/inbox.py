"""Step 1 of the tick: the move commands other threads send, drained into the primary track.

``queue_move``, ``play_now`` and ``clear`` append to a deque from any thread; the tick drains it
at its start, so the first frame that reflects a command is the next one. An estop drops what
waits, from any thread: ``popleft`` is atomic, so each accepted move is finished exactly once
(``MoveFinished(cut=True)``), by whichever of the dropper and the drainer got it.

The inbox also keeps the engine's idle flag (set while no move runs or waits) honest across
threads: a command clears it and appends under the lock the tick takes to set it, so the tick
cannot declare "idle" between the two. The tick reads :attr:`MoveInbox.pending` and
:attr:`MoveInbox.idle` directly, with no call on the ticks where nothing came in.
"""

from __future__ import annotations

import collections
import threading
from collections.abc import Callable
from typing import Literal

from anima.body import FloatArray
from anima.errors import EStopActiveError
from anima.events import Event, MoveFinished
from anima.motion.moves import Move
from anima.motion.primary import PrimaryTrack

# after the queue, preempting, drop and decelerate, or one move by name (its oldest) only
Kind = Literal["queue", "now", "clear", "cancel"]


class MoveInbox:
    """The deque between the command methods and the tick, and the idle flag it keeps."""

    def __init__(
        self,
        track: PrimaryTrack,
        start: Callable[[], FloatArray],
        emit: Callable[[Event], None],
    ) -> None:
        self._track = track
        self._start = start  # where a move starts (the engine's, read when one does)
        self._emit = emit
        # (kind, the move; the name of the move to cancel; None for clear)
        self.pending: collections.deque[tuple[Kind, Move | str | None]] = collections.deque()
        self.idle = threading.Event()  # set while no move runs or waits
        self.idle.set()
        self._lock = threading.Lock()

    def put(self, kind: Kind, move: Move, *, estopped: bool) -> None:
        """A move command (any thread); refused while ``estopped``."""
        if not isinstance(move, Move):
            raise TypeError(f"expected a Move, got {type(move).__name__}")
        if estopped:
            raise EStopActiveError(repr(move.name))
        with self._lock:  # so the tick cannot declare "idle" between these two lines
            self.idle.clear()
            self.pending.append((kind, move))

    def clear(self) -> None:
        """Drop the queue and decelerate the current move, at the next tick (any thread)."""
        self.pending.append(("clear", None))

    def cancel(self, name: str) -> None:
        """End the oldest move named ``name``, at the next tick (any thread): dropped from the
        queue, or, running, decelerated to a hold; every other move is left alone."""
        self.pending.append(("cancel", name))

    def drain(self, t: float) -> None:
        """On the motion thread, at the start of the tick: hand each command to the track."""
        track, start, pending = self._track, self._start, self.pending
        while pending:
            kind, move = pending.popleft()
            if kind == "cancel":
                assert isinstance(move, str)
                track.cancel(move, t, start)
            elif kind == "clear":
                track.clear(t, start)
            elif isinstance(move, str) or move is None:
                raise AssertionError(f"{kind} without a move")
            elif kind == "queue":
                track.enqueue(move, t, start)
            else:
                track.preempt(move, t, start)

    def settle(self) -> None:
        """On the tick the last move ended: idle, unless a command came in meanwhile."""
        with self._lock:
            if not self.pending:
                self.idle.set()

    def drop(self, reason: str, t: float) -> None:
        """Drop every waiting command (any thread), each move finished as cut for ``reason``."""
        while True:
            try:
                _, move = self.pending.popleft()
            except IndexError:
                return
            if move is not None and not isinstance(move, str):
                self._emit(MoveFinished(t=t, name=move.name, cut=True, reason=reason))
