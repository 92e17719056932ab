"""The attention policy: where the robot looks, decided from the people it tracks and the
voices it hears. Pure logic on the runtime clock (:meth:`Policy.decide` takes ``now``); what
the choice does to the head is :mod:`anima.attention.aim`'s.

The rules, first that applies:

1. **Commanded gaze wins.** While a ``look_at`` (for ``behaviour.look_at_hold_s``), a latched
   ``look_at_target`` posture, a head animation (nod, shake), the shutdown or an estop holds the
   head, attention only watches; it resumes ``attention.resume_s`` after the hold ends.
2. **The person speaking**: a voice matched to a face, or a moving mouth.
3. **A voice with no face** seen toward it gets a glance, for ``attention.glance_s`` after the
   voice's last frame. The robot's own voice is never heard here (``VoiceDirection.own_voice``).
4. **A face looking at the robot**, else **the nearest face** (the largest).
5. **Nobody**: idle glances now and then (``attention.idle_glances``): gentle, small (within
   ``IDLE_AZIMUTH`` and ``IDLE_ELEVATION``), a few seconds apart, drawn from a seeded random
   generator at times on the runtime clock; between them the gaze returns to rest.

Hysteresis: the current target is kept while it exists (a person briefly occluded keeps their
id and their last direction). A better candidate must win for ``attention.switch_s`` before the
gaze moves to it; a face needs to be ``CLOSER`` times nearer than the current one to count as
better. Only speech cuts this short: someone who starts talking (rules 2 and 3) outranks a
silent target at once, as a person turns to whoever speaks.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from dataclasses import dataclass

from anima.attention.tracker import Person, wrap
from anima.config.vision import AttentionConfig
from anima.listening.direction.types import VoiceDirection
from anima.wire.attention import TargetKind

CLOSER = 1.25  # a face this many times nearer than the current target's counts as better
IDLE_AZIMUTH = math.radians(20.0)  # idle glances stay within ± this of straight ahead
IDLE_ELEVATION = math.radians(8.0)
IDLE_GAP_S = (3.0, 8.0)  # between idle glances (uniform)
IDLE_GLANCE_S = (0.8, 2.0)  # how long one idle glance lasts (uniform)
VOICE_SAME_RAD = math.radians(15.0)  # voices this close are the same talker (smoothed)
VOICE_SMOOTHING = 0.3  # each new estimate's weight in a glance's direction

_SPEAKING, _VOICE, _FACING, _NEAREST = 4, 3, 2, 1
_REASONS = {_SPEAKING: "speaking", _FACING: "looking at the robot", _NEAREST: "nearest face"}


@dataclass(frozen=True, kw_only=True)
class Choice:
    """Where to look now, and why."""

    kind: TargetKind
    reason: str  # a short phrase for the state and the dashboard
    person: int | None = None  # the person's id when ``kind`` is "person"
    azimuth: float | None = None  # radians, robot frame; None: attention lets the gaze go
    elevation: float | None = None
    gentle: bool = False  # an idle glance: the head moves slowly


@dataclass(frozen=True)
class _Candidate:
    kind: TargetKind
    person: int | None
    rank: int
    closeness: float  # 1 / distance (m⁻¹)
    azimuth: float
    elevation: float

    @property
    def key(self) -> tuple[TargetKind, int | None]:
        return (self.kind, self.person)


@dataclass
class _Glance:
    azimuth: float
    elevation: float
    until: float


class Policy:
    """Decides the target each :meth:`decide`; not thread-safe (its owner locks)."""

    def __init__(self, config: AttentionConfig, *, seed: int = 0) -> None:
        self.config = config
        self._rng = random.Random(seed)
        self._current: tuple[TargetKind, int | None] | None = None
        self._challenger: tuple[TargetKind, int | None] | None = None
        self._challenger_since = 0.0
        self._commanded_until = -math.inf  # when the last commanded hold was seen
        self._voice: _Glance | None = None  # a voice no face matched
        self._idle: _Glance | None = None  # the idle glance under way
        self._next_idle: float | None = None  # when the next idle glance starts

    # ------------------------------------------------------------------ input
    def hear(self, direction: VoiceDirection, person: int | None) -> None:
        """A voice's direction; ``person`` is the tracked person it matched (their own rule), or
        None: then it earns a glance."""
        if direction.own_voice or not direction.speech or person is not None:
            return
        if not self.config.voices:
            return
        g = self._voice
        if g is not None and direction.t <= g.until:
            d = wrap(direction.azimuth - g.azimuth)
            if abs(d) <= VOICE_SAME_RAD:  # the same talker: smooth the estimate
                g.azimuth = wrap(g.azimuth + VOICE_SMOOTHING * d)
                g.elevation += VOICE_SMOOTHING * (direction.elevation - g.elevation)
                g.until = direction.t + self.config.glance_s
                return
        self._voice = _Glance(
            direction.azimuth, direction.elevation, direction.t + self.config.glance_s
        )

    # ------------------------------------------------------------------ the decision
    def decide(self, now: float, people: Sequence[Person], commanded: str | None) -> Choice:
        """The target at ``now``. ``commanded``: why a command holds the head (None: free)."""
        if commanded is not None:
            self._commanded_until = now
            self._forget()
            return Choice(kind="commanded", reason=commanded)
        wait = self._commanded_until + self.config.resume_s - now
        if wait > 0:
            return Choice(kind="commanded", reason=f"resuming in {wait:.1f} s")
        if not self.config.enabled:
            return Choice(kind="none", reason="attention is off")
        candidates = self._candidates(now, people)
        if not candidates:
            self._current = self._challenger = None
            return self._idle_choice(now)
        self._idle = None
        self._next_idle = None
        chosen = self._choose(now, candidates)
        reason = "a voice with no face seen" if chosen.kind == "voice" else _REASONS[chosen.rank]
        return Choice(
            kind=chosen.kind,
            reason=reason,
            person=chosen.person,
            azimuth=chosen.azimuth,
            elevation=chosen.elevation,
        )

    def _forget(self) -> None:
        self._current = self._challenger = None
        self._idle = None
        self._next_idle = None

    def _candidates(self, now: float, people: Sequence[Person]) -> list[_Candidate]:
        out: list[_Candidate] = []
        if self.config.faces:
            for p in people:
                rank = _SPEAKING if p.speaking else _FACING if p.facing else _NEAREST
                out.append(
                    _Candidate(
                        "person", p.id, rank, 1.0 / max(p.distance, 0.1), p.azimuth, p.elevation
                    )
                )
        g = self._voice
        if g is not None and now > g.until:
            self._voice = g = None
        if g is not None:
            out.append(_Candidate("voice", None, _VOICE, 0.0, g.azimuth, g.elevation))
        return out

    def _choose(self, now: float, candidates: list[_Candidate]) -> _Candidate:
        best = max(candidates, key=lambda c: (c.rank, c.closeness))
        current = next((c for c in candidates if c.key == self._current), None)
        if current is None or best is current:
            return self._switch(best)
        better = best.rank > current.rank or best.closeness > current.closeness * CLOSER
        if best.rank > current.rank and best.rank >= _VOICE:
            return self._switch(best)  # someone started talking: at once
        if not better:
            self._challenger = None
            return current
        if self._challenger != best.key:
            self._challenger, self._challenger_since = best.key, now
        if now - self._challenger_since >= self.config.switch_s:
            return self._switch(best)
        return current

    def _switch(self, to: _Candidate) -> _Candidate:
        self._current = to.key
        self._challenger = None
        return to

    def _idle_choice(self, now: float) -> Choice:
        if not (self.config.enabled and self.config.idle_glances):
            return Choice(kind="none", reason="nobody there")
        rng = self._rng
        if self._next_idle is None:
            self._next_idle = now + rng.uniform(*IDLE_GAP_S)
        g = self._idle
        if g is not None and now >= g.until:
            self._idle = g = None
            self._next_idle = now + rng.uniform(*IDLE_GAP_S)
        if g is None and now >= self._next_idle:
            g = self._idle = _Glance(
                rng.uniform(-IDLE_AZIMUTH, IDLE_AZIMUTH),
                rng.uniform(-IDLE_ELEVATION, IDLE_ELEVATION),
                now + rng.uniform(*IDLE_GLANCE_S),
            )
        if g is None:
            return Choice(kind="idle", reason="nobody there")
        return Choice(
            kind="idle",
            reason="idle glance",
            azimuth=g.azimuth,
            elevation=g.elevation,
            gentle=True,
        )
