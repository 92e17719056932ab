"""The speech service's player: lips, sway and cues on the sink's playback clock.

:class:`Player` holds the :class:`~anima.speech.utterance.Playback` of the utterance being played
(the worker hands it over with :meth:`Player.show` once its first audio is in the sink). Its
thread (:meth:`Player.run`, owned by :class:`~anima.speech.service.SpeechService`) follows the
sink's playback clock: it sets the head sway every 50 ms hop and sets the utterance's
``finished`` once the last sample has played. The lips are an override the motion engine reads
every tick (:meth:`Player.lips`) at the sink's playback position, and the cues of annotated
speech fire from a tick hook (:meth:`Player.cue_tick`), so both follow the audio, not the worker.

The player shares the service's lock (a ``threading.Condition`` on a re-entrant lock): the
playback slot is read and cleared under it, and waiting on it is how the player and a held
segment (:meth:`Player.wait_played`) hear that a stop or new audio came.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

import numpy as np

from anima.body import FloatArray, Role
from anima.clock import Clock
from anima.motion.engine import MotionEngine
from anima.speech.base import AudioSink, Cancel
from anima.speech.cues import HOLD_POLL_S, CuePlayer
from anima.speech.sway import ZERO
from anima.speech.utterance import Playback, Utterance

LIPS, SWAY = "lips", "sway"  # the motion engine's lip override and head-sway offset
ANTENNAS = "antennas"  # the override of a body without lips: speech lifts its antennas
_LIP_ROLES = (Role.LIPS_OPEN, Role.LIPS_WIDE, Role.LIPS_NARROW)
_ANTENNA_ROLES = (Role.ANTENNA_RIGHT, Role.ANTENNA_LEFT)


class Player:
    """Follows the playback clock of the utterance being played (see the module docstring)."""

    def __init__(
        self,
        cond: threading.Condition,
        clock: Clock,
        sink: AudioSink,
        motion: MotionEngine,
        cues: CuePlayer,
        *,
        antennas_span: float = 25.0,
        started: Callable[[Utterance], None] | None = None,
    ) -> None:
        self._cond = cond  # the service's lock
        self._clock = clock  # the sink's: the player's waits for time to pass are on it
        self._started = started  # an utterance's first audio is in the sink (under the lock)
        self._sink = sink
        self._motion = motion
        self._cues = cues
        body = motion.body
        lips = [body.role_index(r) for r in _LIP_ROLES]
        self._lip_channels = [i for i in lips if i is not None]
        self._lip_cols = [k for k, i in enumerate(lips) if i is not None]  # of (open, wide, narrow)
        self._lip_lo = np.array([body.channels[i].default for i in self._lip_channels])
        self._lip_span = np.array([body.channels[i].max for i in self._lip_channels]) - self._lip_lo
        # no lips, but antennas: the mouth's opening lifts them, mirrored (right down, left up
        # in their units), by antennas_span at the widest
        antennas = [body.role_index(r) for r in _ANTENNA_ROLES] if not self._lip_channels else []
        self._antenna_channels = [i for i in antennas if i is not None] if antennas_span else []
        signs = [-1.0, 1.0][: len(self._antenna_channels)]
        self._antenna_lo = np.array([body.channels[i].default for i in self._antenna_channels])
        self._antenna_span = antennas_span * np.array(signs)
        self.playback: Playback | None = None  # what plays now (guarded by the lock)

    def show(self, pb: Playback) -> bool:
        """Play ``pb`` from now on, lips included; False (nothing changes) when its utterance
        was stopped meanwhile."""
        with self._cond:
            if pb.utterance.cancel.is_set:
                return False
            self.playback = pb
            if self._started is not None:
                self._started(pb.utterance)  # its start_speak: the audio starts now
            self._cond.notify_all()
        if self._lip_channels:
            self._motion.set_override_source(LIPS, self._lip_channels, self.lips)
        elif self._antenna_channels:
            self._motion.set_override_source(ANTENNAS, self._antenna_channels, self.antennas)
        return True

    def synthesized(self, pb: Playback) -> None:
        """All of ``pb``'s audio is in the sink: it ends once that has played."""
        pb.synthesized = True
        with self._cond:
            self._cond.notify_all()

    def clear(self, u: Utterance | None = None) -> None:
        """Nothing plays from now on (given ``u``: unless what plays is another utterance's)."""
        with self._cond:
            if u is None or (self.playback is not None and self.playback.utterance is u):
                self.playback = None

    def wait_played(self, cancel: Cancel) -> None:
        """Wait until what the sink was given has played, or ``cancel`` is set."""
        with self._cond:
            while not cancel.is_set and self._sink.played() < self._sink.written():
                self._clock.wait_notified(self._cond, HOLD_POLL_S)

    # ------------------------------------------------------------------ engine thread
    def lips(self, _t: float) -> FloatArray | None:
        pb = self.playback
        if pb is None:
            return None  # releases the override
        o, w, n = self._shape(pb)
        values: FloatArray = self._lip_lo + self._lip_span * np.array((o, w, n))[self._lip_cols]
        return values

    def antennas(self, _t: float) -> FloatArray | None:
        """A body without lips: the antennas follow the mouth's opening (the override)."""
        pb = self.playback
        if pb is None:
            return None  # releases the override
        opening = self._shape(pb)[0]
        values: FloatArray = self._antenna_lo + self._antenna_span * opening
        return values

    def _shape(self, pb: Playback) -> tuple[float, float, float]:
        """The mouth at the playback position: at rest while the sink has nothing to play (a
        voice stream's underrun or pause, a synthesis slower than playback), whatever the last
        shape was."""
        played = self._sink.played()
        if pb.paused or played >= self._sink.written():
            return (0.0, 0.0, 0.0)
        return pb.lips.at(pb.origin + played)

    def cue_tick(self, t: float) -> None:
        """First in every motion tick: the cues whose word the sink has reached."""
        pb = self.playback
        if pb is None or pb.paused:
            self._cues.tick(t, None, self._sink.played)
            return
        origin = pb.origin
        self._cues.tick(t, pb.cues, lambda: origin + self._sink.played())

    # ------------------------------------------------------------------ player thread
    def run(self, running: Callable[[], bool], estop: Callable[[], None]) -> None:
        """The player thread's loop, while ``running()`` (read under the lock); ``estop`` is
        called, under the lock, when the motion engine is found estopped."""
        with self._cond:
            while running():
                pb = self.playback
                if pb is None:
                    self._clock.wait_notified(self._cond)  # on the clock: a fake one sees it idle
                    continue
                if self._motion.estopped:
                    # the runtime stops speech with its estop; this catches an estop of the
                    # engine itself (engine.estop()) within one hop
                    estop()
                    continue
                if pb.paused:  # a voice stream's pause: the head rests until it resumes
                    self._motion.set_offset(SWAY, head=(ZERO.roll, ZERO.pitch, ZERO.yaw))
                    self._clock.wait_notified(self._cond, 0.05)  # an engine's estop: a hop
                    continue
                played, written = self._sink.played(), self._sink.written()
                if pb.synthesized and played >= written:
                    pb.utterance.finished.set()
                    self.playback = None
                    self._cond.notify_all()  # a voice stream's worker waits for its end
                    continue
                hop = max(1, int(0.05 * pb.rate))
                played += pb.origin  # the utterance's position (a resumed stream's sink restarted)
                written += pb.origin
                k = played // hop
                s = pb.sway[k] if k < len(pb.sway) else ZERO
                self._motion.set_offset(SWAY, head=(s.roll, s.pitch, s.yaw))
                # sleep to the next hop boundary or the end of the audio, whichever is first
                until = min((k + 1) * hop, written) if pb.synthesized else (k + 1) * hop
                self._clock.wait_notified(self._cond, max(0.001, (until - played) / pb.rate))
