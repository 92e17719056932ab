"""The motion engine: one thread, one tick function, one call to the driver per tick.

Each tick, at an absolute deadline on the injected clock:

1. tick hooks (:mod:`anima.motion.hooks`), then drain pending commands (start/clear moves;
   estop is a flag that jumps every queue);
2. primary: evaluate the current move, blended in from the last commanded frame;
3. idle layers (breathing, blink) on the channels no move owns, handed back with a blend;
4. secondary offsets added (head orientation composed as a rotation), smoothed and slew-limited;
5. overrides (lips) replace their channels;
6. safety: non-finite rejected, clamp to range, forbidden combinations, per-tick step limit;
7. ``driver.send(frame)``; what it returns becomes the last commanded frame.

Other threads talk to the engine only through its methods: a command deque for moves and
latest-value slots (lock + dirty flag) for offsets and overrides. Nothing here blocks.
"""

from __future__ import annotations

import collections
import logging
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from anima.body import Body, FloatArray, Role
from anima.clock import Clock, MonotonicClock
from anima.config import MotionConfig
from anima.drivers.base import Driver, Frame
from anima.errors import EngineStateError, EStopActiveError, InvalidCommandError
from anima.events import EngineFault, EStopChanged, Event, EventHub, MoveFinished
from anima.motion.hooks import TickHook, TickHooks
from anima.motion.idle import IdleLayer, default_idle_layers
from anima.motion.idle_mix import IdleMixer
from anima.motion.moves import Move
from anima.motion.offsets import Offset, OffsetBank
from anima.motion.overrides import OverrideFn, OverrideTable
from anima.motion.primary import PrimaryTrack
from anima.motion.priority import enter_realtime
from anima.motion.safety import SafetyStage
from anima.motion.timer import LoopStats, LoopTimer

log = logging.getLogger(__name__)

_QUEUE, _NOW, _CLEAR = "queue", "now", "clear"
# Channels an estop does not hold: a mouth frozen open looks broken and holds nothing safe, so
# the lips return to rest (at the safety stage's step limit) while everything else stays put.
_ESTOP_RELEASED = (Role.LIPS_OPEN, Role.LIPS_WIDE, Role.LIPS_NARROW)


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
        self.clock: Clock = clock or MonotonicClock(spin_s=cfg.spin_s)
        self._driver = driver
        self._events = events
        self.period = cfg.period
        self._timer = LoopTimer(self.clock, self.period, cfg.stats_window)
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
        released = (body.role_index(r) for r in _ESTOP_RELEASED)
        self._estop_released = np.array([i for i in released if i is not None], dtype=np.intp)
        self._rest = rest.copy()
        self._base = rest.copy()  # held primary pose (moves write their channels here)
        self._pre = rest.copy()  # after idle layers: what offsets are added to
        self._composed = rest.copy()  # after offsets and overrides, before safety
        self._out = rest.copy()  # after safety
        self._last = rest.copy()  # last commanded (what the driver says it sent)

        self._commands: collections.deque[tuple[str, Move | None]] = collections.deque()
        self._primary = PrimaryTrack(
            self._base,
            self.period,
            blend_s=cfg.blend_s,
            stop_s=cfg.stop_s,
            emit=self._emit,
            fault=self._fault,
            ownership_changed=self._idle.ownership_changed,
        )
        self._estop = False
        self._estop_applied = False
        self._estop_pending = False
        self._idle_event = threading.Event()  # set while no move runs or waits
        self._idle_event.set()
        self._idle_lock = threading.Lock()
        self._faults = 0
        self._driver_ok = False
        self._t = 0.0

        self._thread: threading.Thread | None = None
        self._running = threading.Event()

    # ------------------------------------------------------------------ commands (any thread)
    def queue_move(self, move: Move) -> None:
        """Run ``move`` after those already queued."""
        self._command(_QUEUE, move)

    def play_now(self, move: Move) -> None:
        """Preempt: drop the queue, cut the current move (blended), start ``move`` next tick."""
        self._command(_NOW, move)

    def clear(self) -> None:
        """Drop the queue and decelerate the current move to a hold (never a cut)."""
        self._commands.append((_CLEAR, None))

    def estop(self) -> None:
        """Hold the current frame from the next tick on; refuse moves until :meth:`reset`.

        Every channel holds except the lips, which return to rest within the step limit.

        Latched: even when :meth:`reset` follows before the next tick, that tick still cuts the
        current move and the queue.
        """
        self._estop = True
        self._estop_pending = True
        self._drop_commands("estop")

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
        head: tuple[float, float, float] = (0.0, 0.0, 0.0),
        deltas: Mapping[str | int, float] | None = None,
        *,
        bandwidth_hz: float | None = None,
    ) -> None:
        """Set offset source ``name``: head (roll, pitch, yaw) in radians, deltas in units."""
        if len(head) != 3:
            raise InvalidCommandError(
                f"offset {name!r}: head needs (roll, pitch, yaw), got {head!r}"
            )
        roll, pitch, yaw = (float(a) for a in head)
        self._offsets.set(
            name, Offset(head=(roll, pitch, yaw), deltas=dict(deltas or {})), bandwidth_hz
        )

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

    def _command(self, kind: str, move: Move) -> None:
        if not isinstance(move, Move):
            raise TypeError(f"expected a Move, got {type(move).__name__}")
        if self._estop:
            raise EStopActiveError(repr(move.name))
        with self._idle_lock:  # so the tick cannot declare "idle" between these two lines
            self._idle_event.clear()
            self._commands.append((kind, move))

    # ------------------------------------------------------------------ introspection
    def stats(self) -> LoopStats:
        return self._timer.stats()

    def period_errors_since(self, tick: int) -> NDArray[np.float64]:
        """Each tick's lateness (s) since tick number ``tick`` (``stats().ticks`` then)."""
        return self._timer.errors_since(tick)

    def state(self) -> EngineState:
        return EngineState(
            move=self._primary.move_name,
            queued=len(self._primary.queue),
            estopped=self._estop,
            offsets=self._offsets.sources,
            overrides=self._overrides.names,
            driver_connected=self._driver_ok,
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
        if self._thread is not None:
            raise EngineStateError("motion engine already started")
        self._running.set()
        self._thread = threading.Thread(target=self._loop, name="anima-motion", daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 1.0) -> None:
        """Stop the loop thread and wait for it (at most ``timeout`` seconds)."""
        thread = self._thread
        if thread is None:
            return
        self._running.clear()
        thread.join(timeout)
        if thread.is_alive():
            raise EngineStateError(f"motion loop did not stop within {timeout} s")
        self._thread = None

    @property
    def running(self) -> bool:
        return self._thread is not None and self._running.is_set()

    def run(self, ticks: int) -> None:
        """Run ``ticks`` ticks on the calling thread (tests and benchmarks; fake or real clock)."""
        timer, clock = self._timer, self.clock
        if timer.ticks == 0:
            timer.start()
        for _ in range(ticks):
            due = timer.wait()
            begin = clock.now()
            self.tick(due)
            timer.record_compute(clock.now() - begin)

    def _loop(self) -> None:
        enter_realtime(self.config.realtime_priority, self.clock)  # where the OS allows it
        timer, clock = self._timer, self.clock
        timer.start()
        while self._running.is_set():
            due = timer.wait()
            begin = clock.now()
            try:
                self.tick(due)
            except Exception as exc:  # the loop must survive anything a plug-in does
                log.exception("motion tick failed")
                self._fault("engine", f"tick failed: {exc!r}")
            timer.record_compute(clock.now() - begin)

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
            self._drain(t)
        track = self._primary
        track.step(t, self._start_frame)
        if not track.busy and not self._idle_event.is_set():
            with self._idle_lock:  # taken only on the tick the last move ends
                if not self._commands:
                    self._idle_event.set()
        base, pre = self._base, self._pre
        np.copyto(pre, base)
        self._idle.mix(t, base, track.owned, pre)
        composed = self._composed
        np.copyto(composed, pre)
        if self._offsets.step():
            self._offsets.apply(composed)
        self._overrides.apply(t, composed)
        out = self._out
        np.copyto(out, composed)
        if not self._safety.apply(out, self._last):
            self._fault("safety", "non-finite values replaced by the last commanded ones")
        return self._send(t, out)

    def _send(self, t: float, values: FloatArray) -> Frame:
        frame = Frame(t, values.copy())
        driver = self._driver
        try:
            if driver.is_connected:
                frame = driver.send(frame)
                self._driver_ok = driver.is_connected
            else:
                self._driver_ok = False
        except Exception as exc:  # a driver failure must not stop the loop
            self._driver_ok = False
            self._fault("driver", f"send failed: {exc!r}")
        if self._driver_ok:
            np.copyto(self._last, frame.values)
        # else: the robot still holds the last frame it got; keeping it as "last commanded"
        # makes the step limit ramp from there when the driver comes back
        return frame

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
            self._drop_commands("estop")  # moves that raced past the check in queue_move
            return self._send(t, self._held())
        self._estop_applied = False
        self._emit(EStopChanged(t=t, active=False))
        return None

    def _held(self) -> FloatArray:
        """The estop frame: the last commanded one, the lips on their way to rest."""
        held = self._out
        np.copyto(held, self._last)
        released = self._estop_released
        if released.size:
            held[released] = self._rest[released]
            self._safety.apply(held, self._last)  # one step per tick, the lip rule kept
        return held

    def _drain(self, t: float) -> None:
        track, start = self._primary, self._start_frame
        while self._commands:
            kind, move = self._commands.popleft()
            if kind == _QUEUE:
                assert move is not None
                track.enqueue(move, t, start)
            elif kind == _NOW:
                assert move is not None
                track.preempt(move, t, start)
            else:
                track.clear(t, start)

    def _start_frame(self) -> FloatArray:
        """Where a move starts: the last commanded frame, less this tick's offsets/overrides."""
        return self._pre + (self._last - self._composed)

    def _drop_commands(self, reason: str) -> None:
        # any thread: popleft is atomic, so each accepted move is finished exactly once
        while True:
            try:
                _, move = self._commands.popleft()
            except IndexError:
                return
            if move is not None:
                self._emit(MoveFinished(t=self._t, name=move.name, cut=True, reason=reason))

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
