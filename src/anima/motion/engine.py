"""The motion engine: one thread, one tick function, one call to the driver per tick.

Each tick, at an absolute deadline on the injected clock:

1. drain pending commands (start/clear moves; estop is a flag that jumps every queue);
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

from anima.body import Body, FloatArray
from anima.clock import Clock, MonotonicClock
from anima.config import MotionConfig
from anima.drivers.base import Driver, Frame
from anima.errors import EngineStateError, EStopActiveError, InvalidCommandError
from anima.events import EngineFault, EStopChanged, Event, EventHub, MoveFinished, MoveStarted
from anima.motion.idle import Blink, Breathing, IdleLayer
from anima.motion.idle_mix import IdleMixer
from anima.motion.minjerk import min_jerk
from anima.motion.moves import Decelerate, Move
from anima.motion.offsets import Offset, OffsetBank
from anima.motion.overrides import OverrideFn, OverrideTable
from anima.motion.safety import SafetyStage, all_finite
from anima.motion.timer import LoopStats, LoopTimer

log = logging.getLogger(__name__)

_QUEUE, _NOW, _CLEAR = "queue", "now", "clear"
# Local move time is a difference of two clock readings near t0 (~1e3 s or more), so it carries
# rounding error of ~1e-13 s: a move whose end falls on a tick must not slip to the next one.
_TIME_EPS = 1e-9


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


def default_idle_layers(body: Body, config: MotionConfig) -> list[IdleLayer]:
    layers: list[IdleLayer] = []
    if config.breathing.enabled:
        b = config.breathing
        layers.append(Breathing(body, period_s=b.period_s, amplitude_rad=b.amplitude_rad))
    if config.blink.enabled:
        k = config.blink
        layers.append(
            Blink(
                body, interval_s=k.interval_s, close_s=k.close_s, hold_s=k.hold_s, open_s=k.open_s
            )
        )
    return layers


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
        self._idle = IdleMixer(
            list(idle) if idle is not None else default_idle_layers(body, cfg),
            len(body),
            self.period,
            cfg.idle_handback_s,
        )

        n = len(body)
        rest = body.defaults()
        self._base = rest.copy()  # held primary pose (moves write their channels here)
        self._pre = rest.copy()  # after idle layers: what offsets are added to
        self._composed = rest.copy()  # after offsets and overrides, before safety
        self._out = rest.copy()  # after safety
        self._last = rest.copy()  # last commanded (what the driver says it sent)
        self._owned = np.zeros(n, dtype=bool)

        self._commands: collections.deque[tuple[str, Move | None]] = collections.deque()
        self._queue: collections.deque[Move] = collections.deque()
        self._move: Move | None = None
        self._move_announced = False  # MoveStarted was published for it (not a Decelerate)
        self._move_t0 = 0.0
        self._move_end = 0.0
        self._blend_from: FloatArray | None = None
        self._estop = False
        self._estop_applied = False
        self._estop_pending = False
        self._idle_event = threading.Event()
        self._idle_event.set()
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

    def clear_offset(self, name: str) -> None:
        self._offsets.clear(name)

    def set_override(self, name: str, values: Mapping[str | int, float]) -> None:
        """Own ``values``' channels with fixed values until :meth:`release_override`."""
        self._overrides.set_values(name, values)

    def set_override_source(self, name: str, channels: Sequence[str | int], fn: OverrideFn) -> None:
        """Own ``channels`` with values from ``fn(t)`` each tick; ``None`` from fn releases."""
        self._overrides.set_source(name, channels, fn)

    def release_override(self, name: str) -> None:
        self._overrides.release(name)

    def _command(self, kind: str, move: Move) -> None:
        if not isinstance(move, Move):
            raise TypeError(f"expected a Move, got {type(move).__name__}")
        if self._estop:
            raise EStopActiveError(f"emergency stop is active: {move.name!r} refused; reset first")
        self._idle_event.clear()
        self._commands.append((kind, move))

    # ------------------------------------------------------------------ introspection
    def stats(self) -> LoopStats:
        return self._timer.stats()

    def state(self) -> EngineState:
        move = self._move
        return EngineState(
            move=None if move is None else move.name,
            queued=len(self._queue),
            estopped=self._estop,
            offsets=self._offsets.sources,
            overrides=self._overrides.names,
            driver_connected=self._driver_ok,
            frame=tuple(self._last.tolist()),
        )

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
        if self._commands:
            self._drain(t)
        base = self._base
        if self._move is None and self._queue:
            self._begin(self._queue.popleft(), t)
        if self._move is not None:
            self._primary(t)
        pre = self._pre
        np.copyto(pre, base)
        self._idle.mix(t, base, self._owned, pre)
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
                self._cut("estop")
                self._drop_queue("estop")
                self._offsets.reset()
                self._overrides.reset()
                np.copyto(self._base, self._last)
                np.copyto(self._pre, self._last)
                np.copyto(self._composed, self._last)
                self._owned[:] = False
                self._idle.release_all()
                self._idle_event.set()
                self._emit(EStopChanged(t=t, active=True))
        if self._estop:
            self._drop_commands("estop")  # moves that raced past the check in queue_move
            return self._send(t, self._last)
        self._estop_applied = False
        self._emit(EStopChanged(t=t, active=False))
        return None

    def _drain(self, t: float) -> None:
        while self._commands:
            kind, move = self._commands.popleft()
            if kind == _QUEUE:
                assert move is not None
                if self._move is None and not self._queue:
                    self._begin(move, t)
                else:
                    self._queue.append(move)
            elif kind == _NOW:
                assert move is not None
                self._drop_queue("preempted")
                self._cut("preempted")
                self._begin(move, t)
            else:
                self._drop_queue("cleared")
                self._decelerate(t)

    def _drop_commands(self, reason: str) -> None:
        # any thread: popleft is atomic, so each accepted move is finished exactly once
        while True:
            try:
                _, move = self._commands.popleft()
            except IndexError:
                return
            if move is not None:
                self._emit(MoveFinished(t=self._t, name=move.name, cut=True, reason=reason))

    def _drop_queue(self, reason: str) -> None:
        while self._queue:
            self._emit(
                MoveFinished(t=self._t, name=self._queue.popleft().name, cut=True, reason=reason)
            )

    def _cut(self, reason: str) -> None:
        if self._move is not None:
            if self._move_announced:
                self._emit(MoveFinished(t=self._t, name=self._move.name, cut=True, reason=reason))
            self._move = None
            self._owned[:] = False
            self._idle.ownership_changed()

    def _decelerate(self, t: float) -> None:
        move = self._move
        if move is None:
            self._idle_event.set()
            return
        lt = t - self._move_t0
        now = self._primary_values(move, lt)
        before = self._primary_values(move, max(lt - self.period, 0.0))
        velocity = (now - before) / self.period
        self._cut("cleared")
        self._begin(Decelerate(move.channels, velocity, self.config.stop_s), t, emit=False)

    def _begin(self, move: Move, t: float, *, emit: bool = True) -> None:
        # The move's t=0 is the previous tick, whose frame is the one it starts from: the first
        # frame that reflects a command is therefore this very tick's.
        start = self._pre + (self._last - self._composed)
        move.begin(start)
        channels = move.channels
        self._move = move
        self._move_announced = emit
        self._move_t0 = t - self.period
        first = np.asarray(move.evaluate(0.0), dtype=np.float64)
        gap = start[channels] - first
        blending = gap.size > 0 and float(np.abs(gap).max()) > 1e-9
        self._blend_from = gap if blending else None
        blend = self.config.blend_s if blending else 0.0
        self._move_end = max(move.duration, blend)
        self._owned[:] = False
        self._owned[channels] = True
        self._idle.ownership_changed()  # owned channels drop to weight 0 this very tick
        self._idle_event.clear()
        if emit:
            self._emit(MoveStarted(t=t, name=move.name, duration=move.duration))

    def _primary_values(self, move: Move, lt: float) -> FloatArray:
        values = np.asarray(move.evaluate(min(lt, move.duration)), dtype=np.float64)
        gap = self._blend_from
        if gap is not None and lt < self.config.blend_s:
            values = values + gap * (1.0 - min_jerk(lt / self.config.blend_s))
        return values

    def _primary(self, t: float) -> None:
        move = self._move
        assert move is not None
        lt = t - self._move_t0
        ending = lt >= self._move_end - _TIME_EPS
        if ending:
            lt = max(lt, self._move_end)
        try:
            values = self._primary_values(move, lt)
            if values.shape != move.channels.shape or not all_finite(values):
                raise ValueError(f"evaluate() gave {values.shape} values or non-finite ones")
        except Exception as exc:  # a broken move is dropped, the body holds where it was
            self._fault(f"move:{move.name}", f"{exc}")
            self._cut("failed")
            self._idle_event.set()
            return
        self._base[move.channels] = values
        if ending:
            if self._move_announced:
                self._emit(MoveFinished(t=t, name=move.name, cut=False))
            self._move = None
            self._owned[:] = False
            self._idle.ownership_changed()
            if not self._queue and not self._commands:
                self._idle_event.set()

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
