"""Attention, assembled: faces and voices in, the gaze offsets out, a snapshot for the state.

::

    frame + faces ──► (post_faces: a one-frame slot the motion thread reads) ─┐
    engine frame tap ──► pose history; then the slot's faces ──► on_faces:   ◄─┘
        geometry (head pose at the frame's capture time) ──► tracker ───────────────┐
    voice direction ─────────────────────────────────────────────► tracker, policy ──┤
    tick (in the tap, 20 Hz; and after each frame) ──► policy.decide ──► aim (offsets) ◄┘

The vision thread hands each frame's faces to :meth:`Attention.post_faces`, which only puts
them in a one-frame slot; the engine's frame tap, on the motion thread right after a tick's
output, reads the slot and runs :meth:`Attention.on_faces` (~0.5 ms of Python a frame). Run on
the vision thread, that Python held the interpreter lock when the loop woke for its tick and
made the loop's tick-lateness p99 1.4-1.7x (docs/attention.md); on the motion thread, after
the tick's frame is sent, it costs the loop nothing but its own time (the next tick is 10 ms
away), and a frame is acted on within one tick of its detection. :meth:`Attention.on_faces`
is public (a test or bench hands faces straight in), and :meth:`Attention.on_voice` is called
from the listening thread; both return quickly (a lock, some arithmetic, two offset slots).
The same tap ticks the policy between frames (every ``tick_s``, 50 ms): timeouts (a person
lost, a glance over, the resume after a commanded gaze) and idle glances; attention has no
thread of its own. :meth:`Attention.tick` is public, so a test steps it by hand instead.
"""

from __future__ import annotations

import collections
import dataclasses
import logging
import math
import threading
from collections.abc import Callable, Sequence

from anima.attention.aim import Aim
from anima.attention.geometry import CameraModel, from_head
from anima.attention.policy import Choice, Policy
from anima.attention.pose_history import TAP, Lag, PoseHistory
from anima.attention.tracker import Detection, Tracker
from anima.behaviour.controller import Behaviour
from anima.body.gaze import GazeKinematics
from anima.clock import Clock
from anima.config.vision import AttentionConfig, VisionConfig
from anima.drivers.base import Frame
from anima.events import AttentionChanged, Publisher
from anima.listening.direction.types import VoiceDirection
from anima.motion.engine import MotionEngine
from anima.vision.types import Face, VideoFrame
from anima.wire.attention import AttentionSnapshot, PersonState

log = logging.getLogger(__name__)


class Attention:
    """The robot's social attention on one engine (see the module docstring)."""

    def __init__(
        self,
        engine: MotionEngine,
        behaviour: Behaviour | None,
        clock: Clock,
        vision: VisionConfig,
        attention: AttentionConfig,
        *,
        lag: Lag | None = None,
        seed: int = 0,
        tick_s: float = 0.05,
        events: Publisher | None = None,
    ) -> None:
        """``lag``: the driver's measured command → position lag
        (:func:`~anima.attention.pose_history.measured_lag`); ``seed``: the idle glances';
        ``events``: where an :class:`~anima.events.AttentionChanged` goes when the target
        (its kind, or the person) changes. ``self.vision`` is ``vision`` with the camera's
        figures in effect on ``engine.body`` (:meth:`VisionConfig.on_body`)."""
        self._events = events
        self.engine = engine
        self.behaviour = behaviour
        self.clock = clock
        # the camera in effect: each key the user set, else the body's [camera]'s, else the default
        self.vision = vision.on_body(engine.body.camera)
        self.config = attention
        self.poses = PoseHistory(engine.body, rate_hz=1.0 / engine.period, lag=lag)
        self.camera = CameraModel(self.vision)
        self.tracker = Tracker(lost_s=attention.lost_s)
        self.policy = Policy(attention, seed=seed)
        kinematics = (
            behaviour.gaze.kinematics if behaviour is not None else GazeKinematics(engine.body)
        )
        self.aim = Aim(engine, kinematics, self.poses)
        self.latencies: collections.deque[float] = collections.deque(maxlen=4096)
        self._tick_s = tick_s
        self._lock = threading.Lock()
        self._choice = Choice(kind="none", reason="not started")
        self._names: dict[int, str] = {}  # track id → the name its person gave
        self._voice_azimuth: float | None = None
        self._attached = False
        self._stopped = False  # after stop(): inputs and ticks are ignored until attach()
        self._ticking = False  # start(): the tap ticks the policy every tick_s
        self._next_tick = -math.inf
        # post_faces → the tap: the newest frame's faces not yet read (append and popleft are
        # atomic: no lock between the vision thread and the motion thread)
        self._posted: collections.deque[tuple[VideoFrame, tuple[Face, ...]]] = collections.deque(
            maxlen=1
        )
        self._tap_failures = 0

    # ------------------------------------------------------------------ lifecycle
    def attach(self) -> None:
        """Start keeping the head's pose and reading posted faces (the engine's frame tap);
        :meth:`start` does it."""
        if not self._attached:
            self.engine.set_frame_tap(TAP, self._tap)
            self._attached = True
        self._stopped = False

    def start(self) -> None:
        """Keep the head's pose, read posted faces and tick the policy every ``tick_s``, all in
        the engine's frame tap (the motion thread, after each tick's output); idempotent."""
        self.attach()
        self._next_tick = -math.inf
        self._ticking = True

    def stop(self, timeout: float = 1.0) -> None:
        """Stop the ticks and the tap, and let the gaze go (``timeout``: kept for the parts'
        common signature; nothing is waited for)."""
        self._ticking = False
        if self._attached:
            self.engine.remove_frame_tap(TAP)
            self._attached = False
        self._posted.clear()
        with self._lock:
            self._stopped = True
            self.aim.release()
            self._choice = Choice(kind="none", reason="stopped")

    # ------------------------------------------------------------------ input
    def post_faces(self, frame: VideoFrame, faces: Sequence[Face]) -> None:
        """From the vision thread: one frame's faces, read on the motion thread after its next
        tick's output (the newest replaces a frame not yet read); the runtime's way in."""
        self._posted.append((frame, tuple(faces)))

    def _tap(self, sent: Frame) -> None:
        """The engine's frame tap (motion thread, after the tick's output): the pose, then the
        faces posted since the last tick, then the policy's tick when one is due (unless the
        faces just stepped it)."""
        self.poses.tap(sent)
        stepped = False  # a frame's faces stepped the policy in this tap already
        try:
            frame, faces = self._posted.popleft()
        except IndexError:
            pass
        else:
            stepped = self.config.enabled and self.config.faces
            self._guarded("a frame's faces", lambda: self.on_faces(frame, faces))
        if self._ticking and sent.t >= self._next_tick:
            self._next_tick = sent.t + self._tick_s - 1e-9  # every tick_s, on the tick's grid
            if not stepped:  # not twice in one tap: the frame's step decided at this instant
                self._guarded("the policy's tick", self.tick)

    def _guarded(self, what: str, run: Callable[[], object]) -> None:
        """``run()``, its error logged (the first, then every 100th), never raised into the
        tap: the tap (the pose history) must stay."""
        try:
            run()
        except Exception:
            self._tap_failures += 1
            if self._tap_failures == 1 or self._tap_failures % 100 == 0:
                log.exception("attention: %s failed (%d so far)", what, self._tap_failures)

    def on_faces(self, frame: VideoFrame, faces: Sequence[Face]) -> None:
        """One frame's faces (every face of it: one missing is unseen in this frame)."""
        if not (self.config.enabled and self.config.faces):
            return
        now = self.clock.now()
        # the pose when the frame was captured; without compensation, the pose now (the bug
        # of reachy_mini PR #1396, kept for the bench's comparison)
        head = self.poses.at(frame.t if self.config.latency_compensation else now)
        detections = []
        for face in faces:
            s = self.camera.sight(face.box, frame.width, frame.height, head)
            detections.append(
                Detection(
                    t=frame.t,
                    azimuth=s.azimuth,
                    elevation=s.elevation,
                    distance=s.distance,
                    box=face.box,
                    score=face.score,
                    yaw_deg=face.yaw_deg,
                    mouth_open=face.mouth_open,
                )
            )
        with self._lock:
            self.tracker.update(frame.t, detections)
            choice = self._step(now)
            if choice.kind == "person":
                self.latencies.append(self.clock.now() - frame.t)

    def on_voice(self, direction: VoiceDirection) -> None:
        """One direction-of-arrival estimate (the robot's own voice is ignored). One from an
        array on the head (``on_head``) is turned into the robot's frame by the head's pose
        when it was heard (:attr:`VoiceDirection.heard_at`), as a face is by the pose at its
        frame's capture."""
        if not (self.config.enabled and self.config.voices):
            return
        if direction.own_voice or not direction.speech:
            return
        if direction.on_head:
            azimuth, elevation = from_head(
                direction.azimuth, direction.elevation, self.poses.at(direction.heard_at)
            )
            direction = dataclasses.replace(
                direction, azimuth=azimuth, elevation=elevation, on_head=False
            )
        with self._lock:
            self._voice_azimuth = direction.azimuth
            person = self.tracker.voice(direction)
            self.policy.hear(direction, person)
            self._step(self.clock.now())

    def tick(self, now: float | None = None) -> Choice:
        """Decide and aim at ``now`` (default: the clock's); what was chosen."""
        with self._lock:
            return self._step(self.clock.now() if now is None else now)

    # ------------------------------------------------------------------ the step
    def commanded(self, now: float) -> str | None:
        """Why a command holds the head now, or None (attention may look)."""
        if self.engine.estopped:
            return "estop"
        b = self.behaviour
        if b is None:
            return None
        if b.shutting_down:
            return "shutting down"
        if b.latched_target is not None:
            return f"look_at_target {b.latched_target}"
        if b.head_animation_playing:
            return "head animation"
        last = b.last_look_at
        if last is not None and now - last < b.config.look_at_hold_s:
            return "look_at"
        return None

    def _step(self, now: float) -> Choice:
        if self._stopped:
            return self._choice  # a frame or a voice that raced with stop()
        self.tracker.prune(now)
        choice = self.policy.decide(now, self.tracker.people(now), self.commanded(now))
        b = self.behaviour
        if choice.kind != "commanded" and self.config.enabled and b is not None and b.gaze.active:
            b.gaze.release()  # attention resumes: a finished look_at's offset decays
        if choice.azimuth is None or choice.elevation is None:
            self.aim.release()
        else:
            self.aim.look(choice.azimuth, choice.elevation, gentle=choice.gentle)
        previous, self._choice = self._choice, choice
        if self._events is not None and (previous.kind, previous.person) != (
            choice.kind,
            choice.person,
        ):
            self._events.publish(
                AttentionChanged(
                    t=now,
                    target=choice.kind,
                    person=choice.person,
                    azimuth_deg=_deg(choice.azimuth),
                    elevation_deg=_deg(choice.elevation),
                    reason=choice.reason,
                )
            )
        return choice

    def name_speaker(self, name: str) -> int | None:
        """Give ``name`` to the person speaking now (the one looked at because they speak,
        else the only one speaking): their track carries it as long as it lives. None when
        nobody tracked speaks (a voice with no face, or nobody seen)."""
        now = self.clock.now()
        with self._lock:
            people = self.tracker.people(now)
            choice = self._choice
            speaking = [p for p in people if p.speaking]
            chosen = None
            if choice.kind == "person" and any(p.id == choice.person for p in speaking):
                chosen = choice.person
            elif len(speaking) == 1:
                chosen = speaking[0].id
            if chosen is not None:
                self._names[chosen] = name
        return chosen

    def forget_name(self, name: str) -> None:
        """No track carries ``name`` any more ("forget everything about me")."""
        with self._lock:
            for pid in [pid for pid, n in self._names.items() if n.lower() == name.lower()]:
                del self._names[pid]

    def named_person(self) -> str | None:
        """The name of the person looked at, when their track carries one (given earlier in
        its life), else of the only named person speaking; None otherwise."""
        now = self.clock.now()
        with self._lock:
            people = self.tracker.people(now)
            choice = self._choice
            names = dict(self._names)
        alive = {p.id for p in people}
        if choice.kind == "person" and choice.person in names and choice.person in alive:
            return names[choice.person]
        speaking = [names[p.id] for p in people if p.speaking and p.id in names]
        return speaking[0] if len(speaking) == 1 else None

    # ------------------------------------------------------------------ output
    def snapshot(self) -> AttentionSnapshot:
        now = self.clock.now()
        with self._lock:
            people = self.tracker.people(now)
            choice = self._choice
            voice = self._voice_azimuth
            alive = {p.id for p in people}
            for gone in set(self._names) - alive:  # a name lives as long as its track
                del self._names[gone]
            names = dict(self._names)
        return AttentionSnapshot(
            t=now,
            people=tuple(
                PersonState(
                    id=p.id,
                    azimuth_deg=math.degrees(p.azimuth),
                    elevation_deg=math.degrees(p.elevation),
                    distance_m=p.distance,
                    facing=p.facing,
                    speaking=p.speaking,
                    last_seen=p.last_seen,
                    visible=p.visible,
                    name=names.get(p.id),
                )
                for p in people
            ),
            target=choice.kind,
            person=choice.person,
            azimuth_deg=None if choice.azimuth is None else math.degrees(choice.azimuth),
            elevation_deg=None if choice.elevation is None else math.degrees(choice.elevation),
            reason=choice.reason,
            voice_azimuth_deg=None if voice is None else math.degrees(voice),
        )


def _deg(angle: float | None) -> float | None:
    return None if angle is None else math.degrees(angle)
