"""Step 2 of the tick: the queue of mutually exclusive primary moves and the one running.

Every move starts from the last commanded frame: its local ``t = 0`` is the previous tick,
and the gap between that frame and ``evaluate(0)`` decays with a minimum-jerk blend over
``blend_s``. ``clear`` replaces the running move with a deceleration to rest (never a cut);
``preempt`` cuts it (the new move blends from where the body is). Every move accepted gets
exactly one ``MoveFinished``; moves that were started also get a ``MoveStarted``.
"""

from __future__ import annotations

import collections
from collections.abc import Callable

import numpy as np
from numpy.typing import NDArray

from anima.body import FloatArray
from anima.events import Event, MoveFinished, MoveStarted
from anima.motion.minjerk import min_jerk
from anima.motion.moves import Decelerate, Move
from anima.motion.safety import all_finite

# Local move time is a difference of two clock readings near t0 (~1e3 s or more), so it carries
# rounding error of ~1e-13 s: a move whose end falls on a tick must not slip to the next one.
_TIME_EPS = 1e-9


class ActiveMove:
    """A move that has begun: its clock origin, its blend-in and its end."""

    def __init__(
        self,
        move: Move,
        t: float,
        start: FloatArray,
        period: float,
        blend_s: float,
        *,
        announced: bool,
    ) -> None:
        move.begin(start)
        self.move = move
        # a move that does not say its values are finite by construction is checked each tick
        self.checked = not getattr(move, "finite", False)
        self.duration = move.duration  # read once, as ``end`` is
        self.announced = announced  # MoveStarted was published (not an internal Decelerate)
        self.t0 = t - period
        self._blend_s = blend_s
        gap = start[move.channels] - np.asarray(move.evaluate(0.0), dtype=np.float64)
        blending = gap.size > 0 and float(np.abs(gap).max()) > 1e-9
        self._gap: FloatArray | None = gap if blending else None
        self.end = max(self.duration, blend_s if blending else 0.0)

    def values(self, lt: float) -> FloatArray:
        """The move's values at local time ``lt``, with what is left of the blend-in."""
        values = self.move.evaluate(min(lt, self.duration))
        if self.checked:  # a built-in move gives float arrays by construction
            values = np.asarray(values, dtype=np.float64)
        gap = self._gap
        if gap is not None and lt < self._blend_s:
            values = values + gap * (1.0 - min_jerk(lt / self._blend_s))
        return values


class PrimaryTrack:
    """Owns the queue and the running move; writes the move's channels into ``base``."""

    def __init__(
        self,
        base: FloatArray,
        period: float,
        *,
        blend_s: float,
        stop_s: float,
        emit: Callable[[Event], None],
        fault: Callable[[str, str], None],
        ownership_changed: Callable[[], None],
    ) -> None:
        self._base = base
        self._period = period
        self._blend_s = blend_s
        self._stop_s = stop_s
        self._emit = emit
        self._fault = fault
        self._ownership_changed = ownership_changed
        self.owned: NDArray[np.bool_] = np.zeros(len(base), dtype=bool)
        self.queue: collections.deque[Move] = collections.deque()
        self.active: ActiveMove | None = None
        self._t = 0.0

    @property
    def busy(self) -> bool:
        return self.active is not None or bool(self.queue)

    @property
    def move_name(self) -> str | None:
        return None if self.active is None else self.active.move.name

    # --- commands (engine thread) -------------------------------------------------------------
    def enqueue(self, move: Move, t: float, start: Callable[[], FloatArray]) -> None:
        if self.active is None and not self.queue:
            self._begin(move, t, start())
        else:
            self.queue.append(move)

    def preempt(self, move: Move, t: float, start: Callable[[], FloatArray]) -> None:
        self.drop_queue("preempted", t)
        self.cut("preempted", t)
        self._begin(move, t, start())

    def clear(self, t: float, start: Callable[[], FloatArray]) -> None:
        """Drop the queue; decelerate the running move to rest with a continuous velocity."""
        self.drop_queue("cleared", t)
        self._decelerate("cleared", t, start)

    def cancel(self, name: str, t: float, start: Callable[[], FloatArray]) -> None:
        """End the oldest move named ``name`` (reason ``cancelled``): the running one comes to a
        hold as in :meth:`clear` (the queue then goes on), else the first queued one is dropped;
        nothing when none is."""
        active = self.active
        if active is not None and active.announced and active.move.name == name:
            self._decelerate("cancelled", t, start)
            return
        for move in self.queue:
            if move.name == name:
                self.queue.remove(move)
                self._emit(MoveFinished(t=t, name=name, cut=True, reason="cancelled"))
                return

    def _decelerate(self, reason: str, t: float, start: Callable[[], FloatArray]) -> None:
        active = self.active
        if active is None:
            return
        lt = t - active.t0
        velocity = (active.values(lt) - active.values(max(lt - self._period, 0.0))) / self._period
        self.cut(reason, t)
        stop = Decelerate(active.move.channels, velocity, self._stop_s)
        self._begin(stop, t, start(), announced=False)

    def drop_queue(self, reason: str, t: float) -> None:
        while self.queue:
            self._emit(MoveFinished(t=t, name=self.queue.popleft().name, cut=True, reason=reason))

    def cut(self, reason: str, t: float) -> None:
        active = self.active
        if active is not None:
            if active.announced:
                self._emit(MoveFinished(t=t, name=active.move.name, cut=True, reason=reason))
            self._release()

    # --- the tick ---------------------------------------------------------------------------------
    def step(self, t: float, start: Callable[[], FloatArray]) -> None:
        """Start the next queued move if none runs, evaluate the running one into ``base``."""
        if self.active is None:
            if not self.queue:
                return
            self._begin(self.queue.popleft(), t, start())
        active = self.active
        assert active is not None
        move = active.move
        lt = t - active.t0
        ending = lt >= active.end - _TIME_EPS
        if ending:
            lt = max(lt, active.end)
        try:
            values = active.values(lt)
            if active.checked and (values.shape != move.channels.shape or not all_finite(values)):
                raise ValueError(f"evaluate() gave {values.shape} values or non-finite ones")
        except Exception as exc:  # a broken move is dropped, the body holds where it was
            self._fault(f"move:{move.name}", f"{exc}")
            self.cut("failed", t)
            return
        self._base[move.channels] = values
        if ending:
            if active.announced:
                self._emit(MoveFinished(t=t, name=move.name, cut=False))
            self._release()

    def _begin(self, move: Move, t: float, start: FloatArray, *, announced: bool = True) -> None:
        # The move's t=0 is the previous tick, whose frame is the one it starts from: the first
        # frame that reflects a command is therefore this very tick's.
        self.active = ActiveMove(move, t, start, self._period, self._blend_s, announced=announced)
        self.owned[:] = False
        self.owned[move.channels] = True
        self._ownership_changed()
        if announced:
            self._emit(MoveStarted(t=t, name=move.name, duration=move.duration))

    def _release(self) -> None:
        self.active = None
        self.owned[:] = False
        self._ownership_changed()
