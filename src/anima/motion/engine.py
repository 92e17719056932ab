"""The motion engine: one thread, one tick function, one call to the driver per tick.

Each tick, at an absolute deadline on the injected clock:

1. tick hooks (:mod:`anima.motion.hooks`), then drain pending commands
   (:mod:`anima.motion.inbox`: start/clear moves; estop is a flag that jumps every queue);
2. primary: evaluate the current move, blended in from the last commanded frame;
3. idle layers (breathing, blink) on the channels no move owns, handed back with a blend;
4. secondary offsets added (head orientation composed as a rotation), smoothed and slew-limited;
5. overrides (lips) replace their channels;
6. safety: non-finite rejected, clamp to range, forbidden combinations, per-tick step limit;
7. ``driver.send(frame)`` (:mod:`anima.motion.output`); what it returns becomes the last
   commanded frame.

Other threads talk to the engine only through its methods: a command deque for moves and
latest-value slots (lock + dirty flag) for offsets and overrides. Nothing here blocks. The thread
that calls :meth:`MotionEngine.tick` at each deadline, and its timing, are
:mod:`anima.motion.loop`'s.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from anima.body import Body, FloatArray
from anima.clock import Clock, MonotonicClock
from anima.config import MotionConfig
from anima.drivers.base import Driver, Frame
from anima.events import EngineFault, EStopChanged, Event, EventHub
from anima.motion.hooks import TickHook, TickHooks
from anima.motion.idle import IdleLayer, default_idle_layers
from anima.motion.idle_mix import IdleMixer
from anima.motion.inbox import MoveInbox
from anima.motion.loop import MotionLoop
from anima.motion.moves import Move
from anima.motion.offsets import OffsetBank
from anima.motion.output import DriverOutput
from anima.motion.overrides import OverrideFn, OverrideTable
from anima.motion.primary import PrimaryTrack
from anima.motion.priority import AUTO_SPIN_S
from anima.motion.safety import SafetyStage
from anima.motion.taps import FrameTap, FrameTaps
from anima.motion.timer import LoopStats

log = logging.getLogger(__name__)


@dataclass(frozen=True, kw_only=True)
class EngineState:
    """A consistent-enough snapshot for status lines and front doors (not for control)."""

    move: str | None  # name of the running primary move
    queued: int  # moves waiting behind it
    estopped: bool
    offsets: tuple[str, ...]  # active offset sources
    overrides: tuple[str, ...]  # active override sources
    driver_connected: bool
    frame: tuple[float, ...]  # last commanded frame


class MotionEngine:
    """Owns the robot: fuses moves, idle life, offsets and overrides into one safe frame a tick."""

    def __init__(
        self,
        body: Body,
        driver: Driver,
        *,
        clock: Clock | None = None,
        config: MotionConfig | None = None,
        events: EventHub | None = None,
        idle: Sequence[IdleLayer] | None = None,
    ) -> None:
        self.body = body
        self.config = cfg = config or MotionConfig()
        self.clock: Clock = clock or MonotonicClock(
            spin_s=AUTO_SPIN_S if cfg.spin_s is None else cfg.spin_s
        )
        self._events = events
        self.period = cfg.period
        self._safety = SafetyStage(body, self.period)
        self._offsets = OffsetBank(
            body,
            self.period,
            bandwidth_hz=cfg.offset_bandwidth,
            max_rate_rad_s=cfg.offset_max_rate_rad_s,
        )
        self._overrides = OverrideTable(body, self._override_fault)
        self._hooks = TickHooks(self._fault)
        self._idle = IdleMixer(
            list(idle) if idle is not None else default_idle_layers(body, cfg),
            len(body),
            self.period,
            cfg.idle_handback_s,
        )

        rest = body.defaults()
        self._base = rest.copy()  # held primary pose (moves write their channels here)
        self._pre = rest.copy()  # after idle layers: what offsets are added to
        self._composed = rest.copy()  # after offsets and overrides, before safety
        self._out = rest.copy()  # after safety
        self._last = rest.copy()  # last commanded (what the driver says it sent)
        self._output = DriverOutput(driver, self._last, self._fault)
        self._taps = FrameTaps(self._output.send, self._fault)  # step 7, and who sees it

        self._primary = PrimaryTrack(
            self._base,
            self.period,
            blend_s=cfg.blend_s,
            stop_s=cfg.stop_s,
            emit=self._emit,
            fault=self._fault,
            ownership_changed=self._idle.ownership_changed,
        )
        self._start = self._start_frame  # bound once: the tick passes it every time
        self._inbox = MoveInbox(self._primary, self._start, self._emit)
        # the tick reads the inbox's deque and idle flag as its own: no lookup through it a tick
        self._commands = self._inbox.pending
        self._idle_event = self._inbox.idle
        self._estop = False
        self._estop_applied = False
        self._estop_pending = False
        self._faults = 0
        self._t = 0.0
        self._loop = MotionLoop(
            self.tick,
            self.clock,
            self.period,
            window=cfg.stats_window,
            realtime_priority=cfg.realtime_priority,
            auto_spin=clock is None and cfg.spin_s is None,  # a clock given is left alone
            fault=self._fault,
        )

    # ------------------------------------------------------------------ commands (any thread)
    def queue_move(self, move: Move) -> None:
        """Run ``move`` after those already queued."""
        self._inbox.put("queue", move, estopped=self._estop)

    def play_now(self, move: Move) -> None:
        """Preempt: drop the queue, cut the current move (blended), start ``move`` next tick."""
        self._inbox.put("now", move, estopped=self._estop)

    def clear(self) -> None:
        """Drop the queue and decelerate the current move to a hold (never a cut)."""
        self._inbox.clear()

    def cancel_move(self, name: str) -> None:
        """End only the oldest move named ``name``: dropped from the queue, or decelerated to a
        hold if it runs (the queue then goes on). Its MoveFinished says ``cancelled``; nothing
        happens when no such move runs or waits."""
        self._inbox.cancel(name)

    def estop(self) -> None:
        """Hold the current frame from the next tick on; refuse moves until :meth:`reset`.

        Every channel holds except the lips, which return to rest within the step limit.

        Latched: even when :meth:`reset` follows before the next tick, that tick still cuts the
        current move and the queue.
        """
        self._estop = True
        self._estop_pending = True
        self._inbox.drop("estop", self._t)

    def reset(self) -> None:
        """Release the emergency stop; idle life and offsets blend back in."""
        self._estop = False

    @property
    def estopped(self) -> bool:
        return self._estop

    def add_idle_layer(self, layer: IdleLayer) -> None:
        """Run ``layer`` from the next tick on, replacing any layer of the same name."""
        self._idle.add(layer)

    def stop_idle_layer(self, name: str) -> None:
        """Ask idle layer ``name`` to stop (it may fade out first); unknown names are ignored."""
        self._idle.stop(name)

    @property
    def idle_layers(self) -> list[IdleLayer]:
        return list(self._idle.layers)

    @property
    def idle_layer_names(self) -> tuple[str, ...]:
        return self._idle.names

    def set_offset(
        self,
        name: str,
        head: Sequence[float] = (0.0, 0.0, 0.0),  # not a tuple type: checked, with its error
        deltas: Mapping[str | int, float] | None = None,
        *,
        bandwidth_hz: float | None = None,
    ) -> None:
        """Set offset source ``name``: head (roll, pitch, yaw) in radians, deltas in units."""
        self._offsets.set_values(name, head, deltas, bandwidth_hz)

    def set_frame_tap(self, name: str, fn: FrameTap) -> None:
        """Call ``fn(frame)`` with every frame the driver sent, on the motion thread, from
        the next tick (:mod:`anima.motion.taps`: quick, never blocking); replaces tap ``name``."""
        self._taps.set(name, fn)

    def remove_frame_tap(self, name: str) -> None:
        self._taps.remove(name)

    def clear_offset(self, name: str, *, immediate: bool = False) -> None:
        """Let offset ``name`` decay to zero, or drop it at once (``immediate``: barge-in)."""
        if immediate:
            self._offsets.drop(name)
        else:
            self._offsets.clear(name)

    def set_override(self, name: str, values: Mapping[str | int, float]) -> None:
        """Own ``values``' channels with fixed values until :meth:`release_override`."""
        self._overrides.set_values(name, values)

    def set_override_source(self, name: str, channels: Sequence[str | int], fn: OverrideFn) -> None:
        """Own ``channels`` with values from ``fn(t)`` each tick; ``None`` from fn releases."""
        self._overrides.set_source(name, channels, fn)

    def release_override(self, name: str) -> None:
        self._overrides.release(name)

    def set_tick_hook(self, name: str, fn: TickHook) -> None:
        """Run ``fn(t)`` first in every tick (see :mod:`anima.motion.hooks`)."""
        self._hooks.set(name, fn)

    def remove_tick_hook(self, name: str) -> None:
        self._hooks.remove(name)

    # ------------------------------------------------------------------ introspection
    def stats(self) -> LoopStats:
        return self._loop.stats()

    @property
    def ticks(self) -> int:
        """Ticks run since the loop started (cheap: no figures computed)."""
        return self._loop.ticks

    def wait_first_tick(self, timeout: float = 2.0) -> bool:
        """Block (real time) until the loop thread has run its first tick (True) or
        ``timeout`` seconds passed (False)."""
        end = time.monotonic() + timeout
        while self._loop.ticks == 0:
            if time.monotonic() > end:
                return False
            time.sleep(0.001)
        return True

    def period_errors_since(self, tick: int) -> NDArray[np.float64]:
        """Each tick's lateness (s) since tick number ``tick`` (``stats().ticks`` then)."""
        return self._loop.period_errors_since(tick)

    def state(self) -> EngineState:
        return EngineState(
            move=self._primary.move_name,
            queued=len(self._primary.queue),
            estopped=self._estop,
            offsets=self._offsets.sources,
            overrides=self._overrides.names,
            driver_connected=self._output.connected,
            frame=tuple(self._last.tolist()),
        )

    @property
    def primary_frame(self) -> FloatArray:
        """A copy of the pose the primary moves hold (without idle life, offsets, overrides)."""
        return self._base.copy()

    @property
    def last_frame(self) -> FloatArray:
        """A copy of the last commanded frame."""
        return self._last.copy()

    @property
    def is_idle(self) -> bool:
        """No primary move runs or waits."""
        return self._idle_event.is_set()

    @property
    def max_offset_bandwidth_hz(self) -> float:
        """The fastest smoothing an offset source may ask for at this loop rate."""
        return self._offsets.max_bandwidth_hz

    def wait_until_idle(self, timeout: float | None = None) -> bool:
        """Block until no move runs or waits (True), or ``timeout`` passes (False)."""
        return self._idle_event.wait(timeout)

    # ------------------------------------------------------------------ the loop
    def start(self) -> None:
        """Run the loop on a dedicated thread."""
        self._loop.start()

    def stop(self, timeout: float = 1.0) -> None:
        """Stop the loop thread and wait for it (at most ``timeout`` seconds)."""
        self._loop.stop(timeout)

    @property
    def running(self) -> bool:
        return self._loop.running

    def run(self, ticks: int) -> None:
        """Run ``ticks`` ticks on the calling thread (tests and benchmarks; fake or real clock)."""
        self._loop.run(ticks)

    # ------------------------------------------------------------------ one tick
    def tick(self, t: float) -> Frame:
        """Compute and send one frame for nominal time ``t``; returns what the driver sent."""
        self._t = t
        if self._estop or self._estop_applied or self._estop_pending:
            held = self._estop_tick(t)
            if held is not None:
                return held
        self._hooks.run(t)
        if self._commands:
            self._inbox.drain(t)
        track = self._primary
        track.step(t, self._start)
        if track.active is None and not track.queue and not self._idle_event.is_set():
            self._inbox.settle()  # only on the tick the last move ends
        base, pre = self._base, self._pre
        np.copyto(pre, base)
        self._idle.mix(t, base, track.owned, pre)
        composed = self._composed
        np.copyto(composed, pre)
        self._offsets.add_to(composed)
        self._overrides.apply(t, composed)
        out = self._out
        if not self._safety.apply(composed, self._last, out):
            self._fault("safety", "non-finite values replaced by the last commanded ones")
        return self._taps.send(t, out)

    def _estop_tick(self, t: float) -> Frame | None:
        if self._estop_pending:
            self._estop_pending = False
            if not self._estop_applied:
                self._estop_applied = True
                self._primary.cut("estop", t)
                self._primary.drop_queue("estop", t)
                self._offsets.reset()
                self._overrides.reset()
                np.copyto(self._base, self._last)
                np.copyto(self._pre, self._last)
                np.copyto(self._composed, self._last)
                self._idle.release_all()
                self._idle_event.set()
                self._emit(EStopChanged(t=t, active=True))
        if self._estop:
            self._inbox.drop("estop", t)  # moves that raced past the check in queue_move
            self._safety.hold(self._out, self._last)
            return self._taps.send(t, self._out)
        self._estop_applied = False
        self._emit(EStopChanged(t=t, active=False))
        return None

    def _start_frame(self) -> FloatArray:
        """Where a move starts: the last commanded frame, less this tick's offsets/overrides."""
        return self._pre + (self._last - self._composed)

    # ------------------------------------------------------------------ events
    def _emit(self, event: Event) -> None:
        if self._events is not None:
            self._events.publish(event)

    def _fault(self, source: str, reason: str) -> None:
        self._faults += 1
        if self._faults <= 10 or self._faults % 100 == 0:
            log.warning("motion fault from %s: %s", source, reason)
        self._emit(EngineFault(t=self._t, source=source, reason=reason))

    def _override_fault(self, name: str, reason: str) -> None:
        self._fault(f"override:{name}", reason)

    @property
    def faults(self) -> int:
        return self._faults
