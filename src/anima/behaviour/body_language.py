"""Body language: the conversation's phase, shown by the body through the existing layers.

============= ==========================================================================
``listening`` an attentive pose (head slightly forward, eyes left on the speaker); a small
              nod when the person pauses (a partial transcript: the recognizer decodes at
              pauses), at most one every ``nod_every_s``
``thinking``  gaze aversion: the eyes go up and aside while the head stays toward the person
``speaking``  no pose of its own: the speech service's sway and annotated speech's contextual
              beats and tilts (``speech.gesture_mode``) move the head
``interrupted`` a small start back
``sleeping``  a resting pose (head down) and slow breathing (``sleep_animation``, a looping
              idle layer); a wake moves the phase on, and the pose goes with it
``idle``, ``engaged`` nothing: the idle life (breathing, blinks) and the gaze carry on
============= ==========================================================================

Each pose is one additive offset source (:data:`POSE`) reached at ``pose_hz`` and let go when
the phase has none; the nod is another (:data:`NOD`), released by a motion tick hook on the
engine's own clock. Offsets add to whatever the primary moves do, so a commanded gesture or
look-at is never fought, and an estop drops them with everything else. Poses come from the
``body_language`` config section; a body without eyes or a neck leaves that part out.
"""

from __future__ import annotations

import logging
import threading

from anima.behaviour.controller import Behaviour
from anima.body.gaze import GazeKinematics
from anima.config import BodyLanguageConfig
from anima.errors import AnimaError
from anima.events import ConversationChanged, ConversationPhase, Event, EventHub, Transcript

log = logging.getLogger(__name__)

POSE, NOD, HOOK = "presence-pose", "presence-nod", "body-language"


class BodyLanguage:
    """Follows ``conversation`` events and shows each phase (see the module docstring)."""

    def __init__(
        self, behaviour: Behaviour, events: EventHub, config: BodyLanguageConfig | None = None
    ) -> None:
        self.config = config or BodyLanguageConfig()
        self._behaviour = behaviour
        self._engine = behaviour.engine
        self._eyes = GazeKinematics(behaviour.body)
        self._lock = threading.Lock()
        self.phase: ConversationPhase = "idle"
        self._nod_until: float | None = None
        self._last_nod = -1e9
        self._breathing = False
        self.nods = 0  # nods given (for tests and the dashboard)
        self._unsubscribe = (
            events.subscribe(self._on_event, ConversationChanged.kind, Transcript.kind)
            if self.config.enabled
            else None
        )
        if self.config.enabled:
            self._engine.set_tick_hook(HOOK, self._tick)

    def close(self) -> None:
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
        self._engine.remove_tick_hook(HOOK)

    # ------------------------------------------------------------------ events (hub thread)
    def _on_event(self, event: Event) -> None:
        if isinstance(event, ConversationChanged):
            self.show(event.state)
        elif isinstance(event, Transcript) and not event.final and self.phase == "listening":
            self.nod()

    def show(self, phase: ConversationPhase) -> None:
        """Take the pose of ``phase`` (and its breathing), leaving the last one's."""
        cfg = self.config
        with self._lock:
            self.phase = phase
            pose = {
                "listening": (cfg.listening_head, cfg.listening_eyes),
                "thinking": (cfg.thinking_head, cfg.thinking_eyes),
                "interrupted": (cfg.interrupted_head, cfg.interrupted_eyes),
                "sleeping": (cfg.sleeping_head, cfg.sleeping_eyes),
            }.get(phase)
            if self._engine.estopped:
                return  # the estop holds the robot; the next phase after the reset shows
            if pose is None:
                self._engine.clear_offset(POSE)
            else:
                head, (eyes_yaw, eyes_pitch) = pose
                self._engine.set_offset(
                    POSE,
                    head=head,
                    deltas=self._eyes.eye_deltas(eyes_yaw, eyes_pitch),
                    bandwidth_hz=min(cfg.pose_hz, self._engine.max_offset_bandwidth_hz),
                )
            self._breathe(phase == "sleeping")

    def nod(self) -> None:
        """A small nod now, unless one was given within ``nod_every_s``."""
        cfg = self.config
        now = self._engine.clock.now()
        with self._lock:
            if cfg.nod_rad <= 0 or now - self._last_nod < cfg.nod_every_s or self._engine.estopped:
                return
            self._last_nod = now
            self._nod_until = now + cfg.nod_s
            self.nods += 1
        self._engine.set_offset(NOD, head=(0.0, cfg.nod_rad, 0.0))

    def _breathe(self, on: bool) -> None:
        name = self.config.sleep_animation
        if name is None or on == self._breathing or name not in self._behaviour.library:
            return
        try:
            if on:
                self._behaviour.play_animation(name)
            else:
                self._behaviour.stop_idle_animation(name)
            self._breathing = on
        except AnimaError as exc:  # refused (estop): the pose still shows
            log.info("body language: %s not %s: %s", name, "started" if on else "stopped", exc)

    # ------------------------------------------------------------------ motion thread
    def _tick(self, t: float) -> None:
        until = self._nod_until
        if until is not None and t >= until:
            self._nod_until = None
            self._engine.clear_offset(NOD)
