"""Annotated speech's cues, played against the playback clock.

The speech service places each :class:`~anima.language.markup.Cue` at the sample where its word
is heard (the engine's word marks); :meth:`CuePlayer.tick` runs first in every motion tick (a
tick hook) and fires those the sink has played, so a gesture it starts moves in that very tick:
within one tick of its word's audio onset. A ``^run``/``^wait`` holds the speech
(:meth:`CuePlayer.hold`) on the speech worker, never on the motion thread.

Contextual accents are an additive head offset (:data:`ACCENT`): a small roll for a question
(held :data:`ACCENTS` ``["tilt"]`` seconds), a pitch dip for a beat; the engine's offset
smoothing shapes them, and they never fight a commanded move.
"""

from __future__ import annotations

import collections
import logging
from collections.abc import Callable

from anima.clock import Clock
from anima.errors import AnimaError
from anima.events import EventHub, Notice
from anima.language.markup import Cue, Mode, Script, Segment, checked, named
from anima.motion.engine import MotionEngine
from anima.speech.base import Cancel
from anima.speech.gestures import Gestures

log = logging.getLogger(__name__)

ACCENT = "speech-accent"  # the contextual tilt/beat offset
# contextual accents: (roll, pitch) in radians, and how long each is held (s)
ACCENTS = {"tilt": (0.07, 0.0, 0.9), "beat": (0.0, 0.05, 0.25)}
HOLD_POLL_S = 0.005  # a hold (^run, ^wait) looks at the playback clock this often
HOLD_SLACK_S = 2.0  # a held gesture may end this much later than its duration


class CuePlayer:
    def __init__(
        self,
        motion: MotionEngine,
        events: EventHub,
        clock: Clock,
        gestures: Gestures | None,
        mode: Mode = "contextual",
    ) -> None:
        self.gestures = gestures
        self.mode: Mode = mode  # the automatic gestures' mode at the start of each text
        self._motion = motion
        self._events = events
        self._clock = clock
        self._accent_until: float | None = None  # when the contextual tilt/beat is let go

    def script(self, text: str) -> Script:
        """``text``'s script, its markers checked against the gestures: an
        :class:`~anima.errors.InvalidCommandError` for what ``speak`` refuses."""
        gestures = self.gestures
        if gestures is None:
            return checked(text, None, mode=self.mode)
        return checked(text, gestures.known, gestures.choices(), self.mode)

    def named(self, script: Script) -> Script:
        """A script read once (a :class:`~anima.commands.Speak`'s) as this speaker says it:
        its gesture names the library's, its automatic gestures in this speaker's mode."""
        gestures = self.gestures
        if gestures is None:
            return named(script, None, words=False).under(self.mode)
        return named(script, gestures.known, gestures.choices(), words=False).under(self.mode)

    def tick(
        self, t: float, cues: collections.deque[tuple[int, Cue]] | None, played: Callable[[], int]
    ) -> None:
        """Fire the cues (``(sample, cue)`` in sample order) the sink has ``played`` (the
        motion thread, first in a tick); let the accent go when its time is up."""
        until = self._accent_until
        if until is not None and t >= until:
            self._accent_until = None
            self._motion.clear_offset(ACCENT)
        if not cues:
            return
        position = played()
        while cues and cues[0][0] <= position:
            _, cue = cues.popleft()
            self._fire(cue, t)

    def hold(self, segment: Segment, cancel: Cancel) -> None:
        """Start a segment's ``^run`` gestures, then wait for them and its ``^wait`` ones,
        each at most its duration and :data:`HOLD_SLACK_S`; ``cancel`` ends the wait."""
        gestures = self.gestures
        if gestures is None:
            return
        for name in segment.run:
            self.start(name)
        for name in segment.wait:
            deadline = self._clock.now() + gestures.duration(name) + HOLD_SLACK_S
            while not cancel.is_set and not gestures.wait(name, HOLD_POLL_S * 10):
                if self._clock.now() > deadline:
                    log.warning("speech: %s did not end in time; speaking on", name)
                    break

    def release(self) -> None:
        """The speech stopped: the accent goes (smoothly)."""
        self._accent_until = None
        self._motion.clear_offset(ACCENT)

    def start(self, name: str) -> None:
        if self.gestures is None:
            return
        try:
            self.gestures.start(name)
        except AnimaError as exc:  # refused now (estop, a look-at hold): the speech goes on
            self._events.publish(
                Notice(t=self._clock.now(), source="speech", message=f"gesture {name}: {exc}")
            )

    def _fire(self, cue: Cue, t: float) -> None:
        if cue.kind == "start":
            self.start(cue.name)
        elif cue.kind == "stop":
            if self.gestures is not None:
                self.gestures.stop(cue.name)
        else:
            roll, pitch, hold = ACCENTS[cue.kind]
            self._motion.set_offset(ACCENT, head=(roll, pitch, 0.0))
            self._accent_until = t + hold
