"""Nadine's rules for gestures, postures and gaze, on top of the motion engine.

The seed's ``NadineControl`` behaviour, kept, with its flaws fixed:

* ``play_animation(name)``: unknown names are refused with a clear error and nothing moves.
  Except for blink animations, the body first returns to the default posture (blended);
  ``LOOKUP_Waving`` and ``SHUTDOWN_NADINE`` also drop pending moves; ``nod`` and ``shake`` hold
  off position look-at until they end; head and eye channels are left out while a position
  look-at happened in the last 2 s; ``blink`` and ``breathingSlow`` run as idle layers.
* ``look_at_position``: a smoothed gaze offset; ignored while shutting down and during
  nod/shake. A held gaze posture is released first (head and eyes return to the default
  posture under the new gaze), with a notice: the same rule on every door (MQTT, REST, the
  SDK, the agent, MCP).
* ``look_at_target(posture)``: plays the posture and latches it (the default posture clears).
* ``shutdown()``: plays ``SHUTDOWN_NADINE`` and ignores look-at until ``wake()``.
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Iterable, Iterator

from anima.animation.idle_layer import AnimationLayer
from anima.animation.library import AnimationLibrary
from anima.animation.move import AnimationMove
from anima.animation.xml_format import Animation
from anima.behaviour.gaze import GazeFollower, GazeUpdate
from anima.body import Body, Role
from anima.body.gaze import GazeKinematics
from anima.clock import Clock
from anima.commands import LookAtResult
from anima.config import AnimationConfig, BehaviourConfig
from anima.errors import AnimaError, CommandRefusedError, EStopActiveError, InvalidCommandError
from anima.events import Event, EventHub, MoveFinished, Notice
from anima.motion.engine import MotionEngine
from anima.motion.moves import Goto, Move

log = logging.getLogger(__name__)

IDLE_MOVE_PREFIX = "idle:"  # idle life's own moves: not commanded, so no animation_done
_HEAD_EYE_ROLES = (Role.NECK_YAW, Role.NECK_PITCH, Role.NECK_ROLL, Role.EYES_YAW, Role.EYES_PITCH)


class Behaviour:
    """The runtime's character: turns commands into moves, offsets and idle layers."""

    def __init__(
        self,
        engine: MotionEngine,
        library: AnimationLibrary,
        events: EventHub,
        clock: Clock,
        *,
        config: BehaviourConfig | None = None,
        animation: AnimationConfig | None = None,
    ) -> None:
        self.engine = engine
        self.body: Body = engine.body
        self.library = library
        self.events = events
        self.clock = clock
        self.config = cfg = config or BehaviourConfig()
        self.animation_config = animation or AnimationConfig()
        self.gaze = GazeFollower(
            engine,
            GazeKinematics(self.body, head_share=cfg.gaze_head_share),
            clock,
            dead_zone_rad=cfg.gaze_dead_zone_rad,
            smoothing_tau_s=cfg.gaze_smoothing_s,
            eyes_hz=min(5.0, engine.max_offset_bandwidth_hz),
            head_hz=min(1.5, engine.max_offset_bandwidth_hz),
        )
        self._head_eye = {
            i for i in (self.body.role_index(r) for r in _HEAD_EYE_ROLES) if i is not None
        }
        self._lock = threading.RLock()  # reset moves are built both inside and outside it
        self._latched: str | None = None
        self._shutdown = False
        self._head_animations = 0  # queued or playing nod/shake moves
        self._last_look_at: float | None = None
        self._defaults: dict[int, float] = {}  # console `servo`: channel index → new default
        events.subscribe(self._on_event, MoveFinished.kind)

    # ------------------------------------------------------------------ state
    @property
    def latched_target(self) -> str | None:
        return self._latched

    @property
    def shutting_down(self) -> bool:
        return self._shutdown

    @property
    def head_animation_playing(self) -> bool:
        return self._head_animations > 0

    @property
    def last_look_at(self) -> float | None:
        """When the last position look-at was asked (runtime clock); None before the first."""
        return self._last_look_at

    def _recent_look_at(self) -> bool:
        last = self._last_look_at
        return last is not None and self.clock.now() - last < self.config.look_at_hold_s

    @contextlib.contextmanager
    def _asked(self, what: str) -> Iterator[None]:
        """Run a request's engine calls; an estop refusal names ``what`` was asked (``'nod'``),
        not the internal move it became (``'reset:LOOKUPPostureDefault'``).

        Checked first, so a refused request changes no state (latch, shutdown flag, idle layer).
        """
        if self.engine.estopped:
            raise EStopActiveError(what)
        try:
            yield
        except EStopActiveError:  # the estop came between the check and the engine call
            raise EStopActiveError(what) from None

    # ------------------------------------------------------------------ gestures
    def play_animation(self, name: str) -> bool:
        """Play a gesture or posture by ``<animation_name>`` (see the module docstring); True
        when it became an idle layer (blink, a looping idle animation: no move to wait for)."""
        anim = self.library.get(name)  # UnknownAnimationError: nothing moves
        with self._asked(repr(name)):
            return self._play(anim.name, anim)  # the library's name for an alias ("wave")

    def _play(self, name: str, anim: Animation) -> bool:
        cfg = self.config
        if name == cfg.blink_animation or name in cfg.looping_idle_animations:
            self._play_idle(anim, loop=name in cfg.looping_idle_animations)
            return True
        keep_gaze = self._recent_look_at() or self._latched is not None
        skip = self._head_eye if self._recent_look_at() else set()
        move = self._move_for(anim, skip)
        if move is None:
            raise CommandRefusedError(
                f"{name!r} moves only head and eye channels, which are left to the position "
                f"look-at of the last {cfg.look_at_hold_s:g} s"
            )
        moves: list[Move] = []
        if name not in (cfg.full_blink_animation, cfg.default_posture):
            reset = self._reset_move(skip=self._head_eye if keep_gaze else set())
            if reset is not None and not self._holds(reset):
                moves.append(reset)
        moves.append(move)
        clearing = name in cfg.clearing_animations
        with self._lock:
            for i, m in enumerate(moves):
                if clearing and i == 0:
                    self.engine.play_now(m)
                else:
                    self.engine.queue_move(m)
            if name in cfg.head_animations:
                self._head_animations += 1  # its MoveFinished (played or dropped) counts it out
        return False

    def _play_idle(self, anim: Animation, *, loop: bool) -> None:
        self.engine.add_idle_layer(AnimationLayer(anim, self.body, loop=loop))

    def cancel_animation(self, name: str) -> None:
        """End one play of ``name`` only (the oldest queued or running one; a looping idle
        animation fades out), leaving every other move alone. Unknown names are refused; one
        that no longer plays is nothing to do (its end may have crossed the request)."""
        real = self.library.resolve(name)  # UnknownAnimationError: did you mean
        if real in self.config.looping_idle_animations:
            self.stop_idle_animation(real)
        else:
            self.engine.cancel_move(real)

    def stop_idle_animation(self, name: str) -> None:
        """Stop a looping idle animation (``breathingSlow``); it fades out."""
        self.engine.stop_idle_layer(f"anim:{name}")

    def _move_for(self, anim: Animation, skip: Iterable[int]) -> Move | None:
        skip = set(skip)
        cols = [j for j, c in enumerate(anim.channels) if c - 1 not in skip]
        if not cols:
            return None
        channels = [anim.channels[j] - 1 for j in cols]
        if anim.is_posture:
            target: dict[str | int, float] = {
                c: float(anim.frames[0, j]) for c, j in zip(channels, cols, strict=True)
            }
            return Goto(self.body, target, self.animation_config.posture_s, name=anim.name)
        return AnimationMove(anim, self.body, cols)  # shares the loaded frames: no copy

    def _reset_move(self, skip: set[int]) -> Move | None:
        name = self.config.default_posture
        if name not in self.library:
            return None
        anim = self.library.get(name)
        cols = [j for j, c in enumerate(anim.channels) if c - 1 not in skip]
        if not cols:
            return None
        target: dict[str | int, float] = {
            anim.channels[j] - 1: float(anim.frames[0, j]) for j in cols
        }
        with self._lock:
            defaults = dict(self._defaults)
        for index, value in defaults.items():
            if index not in skip:
                target[index] = value
        return Goto(self.body, target, self.animation_config.reset_s, name=f"reset:{name}")

    def _on_event(self, event: Event) -> None:
        if isinstance(event, MoveFinished) and event.name in self.config.head_animations:
            with self._lock:
                self._head_animations = max(0, self._head_animations - 1)

    # ------------------------------------------------------------------ gaze
    def look_at_position(self, x: float, y: float, z: float) -> LookAtResult:
        """Look at a point (metres, head frame: x forward, y left, z up)."""
        self.gaze.kinematics.direction(x, y, z)  # validate first: bad input is an error
        if self._shutdown:
            return LookAtResult.SHUTDOWN
        if self._head_animations > 0:
            return LookAtResult.HEAD_ANIMATION
        if self._latched is not None:
            self._release_posture_for_look_at()
        self._last_look_at = self.clock.now()
        update: GazeUpdate = self.gaze.look_at(x, y, z)
        if update.split.clamped:
            self.events.publish(
                Notice(
                    t=self.clock.now(),
                    source="look_at",
                    message=(
                        f"({x:g}, {y:g}, {z:g}) is out of reach: looking at the nearest "
                        "reachable direction"
                    ),
                )
            )
        return LookAtResult.MOVED if update.moved else LookAtResult.DEAD_ZONE

    def _release_posture_for_look_at(self) -> None:
        """A look-at means it: the held gaze posture is released (as ``end_look_at``) and said.

        Under an estop the release is refused (``EStopActiveError('look_at')``) and the posture
        stays held: a refused request changes no state.
        """
        with self._asked("look_at"), self._lock:
            held = self._latched
            if held is None:  # released meanwhile (another door's end_look_at)
                return
            self._release_latch_locked()
        log.info("look_at released the held gaze posture %r", held)
        self.events.publish(
            Notice(
                t=self.clock.now(),
                source="look_at",
                message=f"look_at released the held gaze posture {held!r}",
            )
        )

    def _release_latch_locked(self) -> None:
        self._latched = None
        self.gaze.release()
        skip = set(range(len(self.body))) - self._head_eye
        reset = self._reset_move(skip=skip)
        if reset is not None:
            self.engine.queue_move(reset)

    def look_at_target(self, name: str) -> None:
        """Play a gaze posture once and latch it; the default posture clears the latch."""
        anim = self.library.get(name)
        if not anim.is_posture:
            raise InvalidCommandError(f"{name!r} is a gesture, not a posture: use play_animation")
        name = anim.name  # the library's name for an alias ("look at me")
        if self._shutdown:
            raise CommandRefusedError("look_at_target refused: shutting down (wake first)")
        move = self._move_for(anim, ())
        assert move is not None
        with self._asked(f"look_at_target {name!r}"), self._lock:
            self._latched = None if name == self.config.default_posture else name
            self.gaze.release()
            self.engine.queue_move(move)

    def end_look_at(self) -> None:
        """Clear the gaze latch and return head and eyes to the default posture."""
        with self._asked("end_look_at"), self._lock:
            self._release_latch_locked()

    def _holds(self, move: Move) -> bool:
        """True when the body already holds ``move``'s targets (nothing to reset)."""
        assert isinstance(move, Goto)
        base = self.engine.primary_frame  # breathing and gaze do not count as "away"
        return all(abs(base[i] - v) < 0.5 for i, v in move.target_items())

    def prepare_to_speak(self) -> None:
        """Nadine's rule: speaking returns the body to the default posture unless a gaze target
        is latched (head and eyes stay with a recent position look-at)."""
        if self._latched is not None or self._shutdown:
            return
        skip = self._head_eye if self._recent_look_at() else set()
        reset = self._reset_move(skip=skip)
        if reset is None:
            return
        if self._holds(reset):
            return  # already there
        with contextlib.suppress(AnimaError):  # estop: speak anyway, without moving
            self.engine.queue_move(reset)

    # ------------------------------------------------------------------ life and death
    def shutdown(self) -> None:
        """Play the shutdown animation; ignore look-at until :meth:`wake`."""
        name = self.config.shutdown_animation
        anim = self.library.get(name)
        move = self._move_for(anim, ())
        assert move is not None
        with self._asked("shutdown"), self._lock:
            self._shutdown = True
            self._latched = None
            self.gaze.release()
            self.engine.play_now(move)
        self.events.publish(Notice(t=self.clock.now(), source="behaviour", message="shutting down"))

    def wake(self) -> None:
        """Leave the shutdown state and return to the default posture."""
        with self._asked("wake"):
            with self._lock:
                self._shutdown = False
            reset = self._reset_move(skip=set())
            if reset is not None:
                self.engine.play_now(reset)

    def set_channel_default(self, channel: int, value: float) -> None:
        """The console's ``servo CH VALUE``: channel ``CH`` (1-based) rests at ``VALUE`` now.

        The channel moves there at once, and every later return to the default posture (before
        a gesture, ``end_look_at``, ``wake``) brings it back there instead of to the posture's
        value, until the runtime restarts.
        """
        if not 1 <= channel <= len(self.body):
            raise InvalidCommandError(f"channel {channel} out of range 1..{len(self.body)}")
        ch = self.body.channels[channel - 1]
        if not ch.min <= value <= ch.max:
            raise InvalidCommandError(
                f"channel {channel} ({ch.name}): {value:g} outside [{ch.min:g}, {ch.max:g}]"
            )
        move = Goto(
            self.body, {channel - 1: value}, self.animation_config.reset_s, name=f"servo:{ch.name}"
        )
        with self._asked(f"servo {channel} ({ch.name})"):
            self.engine.queue_move(move)
            with self._lock:  # after the move is accepted: a refused servo changes nothing
                self._defaults[channel - 1] = value

    def full_blink(self) -> None:
        """The periodic full blink: plain blink while latched, else back to default with a blink.

        The full blink's move is named ``idle:<animation>`` (``idle:LOOKUPPostureDefaultBlink``):
        idle life is not a command, so its moves must not read as the ``animation_done`` a client
        pairs with its own ``play`` of the same animation (the MQTT door reports library names
        only; the SDK's handles pair by name).
        """
        if self._shutdown:
            return
        if self._latched is not None:
            self.play_animation(self.config.blink_animation)
            return
        name = self.config.full_blink_animation
        if name not in self.library:
            return
        anim = self.library.get(name)
        move = self._move_for(anim, ())
        if move is None:
            return
        move.name = f"{IDLE_MOVE_PREFIX}{name}"
        with self._asked(repr(name)):
            self.engine.queue_move(move)
