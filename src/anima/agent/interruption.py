"""Interruption at every stage: what a wake, or a voice over the robot, stops.

:class:`Interruptions` is the conversation's half that reacts to the listener rather than plans.
A wake drops the turn in flight:
- the planner's request is released;
- the robot's speech stops (``end_speak`` reason ``stopped``);
- the plan is canceled.

Then the robot acknowledges the wake with a glance at the person (``agent.acknowledge_wake``).
The glance is a look-at through the runtime, made only while no move plays, so it never fights
a commanded move; when the robot already looks there, it blinks instead.

A barge-in (full duplex: a voice over the robot, a wake with source ``barge_in``) only opens a
candidate. :class:`~anima.agent.barge_in.BargeIn` decides from what follows:
- a stop word in a partial, or a voice still going after ``listen.barge_in_s``: the robot
  stops at once (reason ``interrupted``);
- the round's final: a backchannel, a cough or an unsure final lets the robot go on, anything
  else stops it and is the next request.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING

from anima import commands as cmd
from anima.agent.barge_in import BargeIn
from anima.agent.presence import Presence
from anima.commands import LookAtResult
from anima.errors import AnimaError
from anima.events import SpeechEndReason, Transcript, WakeDetected

if TYPE_CHECKING:
    from anima.agent.executor import Executor
    from anima.agent.planners.base import Planner
    from anima.agent.port import RobotPort
    from anima.listening.listener import Listener

log = logging.getLogger(__name__)

GLANCE = (1.0, 0.0, 0.12)  # the wake's acknowledgement: look at the person, a little up (m)


class Interruptions:
    """Stops what is in flight (see the module docstring). ``bump`` starts a new generation of
    the conversation's work (what was queued before is dropped); ``listener`` gives the
    listener in use (it is attached after the conversation is made)."""

    def __init__(
        self,
        robot: RobotPort,
        planner: Planner,
        executor: Executor,
        *,
        bump: Callable[[], None],
        listener: Callable[[], Listener | None],
        barge: BargeIn,
        presence: Presence,
        acknowledge_wake: bool = True,
    ) -> None:
        self.robot = robot
        self.planner = planner
        self.executor = executor
        self.barge = barge
        self.presence = presence
        self.acknowledge_wake = acknowledge_wake
        self._bump = bump
        self._listener = listener

    def wake(self, event: WakeDetected) -> None:
        """A wake: halt, then glance (when no plan was running). A barge-in opens a candidate."""
        if event.source == "barge_in":
            self._barge_heard()
            return
        acting = self.halt("stopped")
        self.presence.to("listening", f"wake ({event.source})")
        if self.acknowledge_wake and not acting:
            self.glance()
        log.info("wake (%s): listening", event.source)

    def halt(self, speech_reason: SpeechEndReason) -> bool:
        """Drop the turn in flight: the planner's request, the robot's speech (ended with
        ``speech_reason``), the plan. True when a plan was running."""
        self._bump()
        self.planner.interrupt()
        if self.robot.speaking:
            self.robot.execute(cmd.StopSpeaking(reason=speech_reason))
        return self.executor.cancel("interrupted")

    def glance(self) -> None:
        """Look at the person: a look-at (which releases a held gaze posture, as every
        look-at does, and is ignored while a head animation plays), or a blink when the robot
        already looks there; skipped while any move plays or waits."""
        robot = self.robot
        if robot.estopped or robot.moving:
            return
        try:
            looked = robot.execute(cmd.LookAt(x=GLANCE[0], y=GLANCE[1], z=GLANCE[2]))
            if looked is not LookAtResult.MOVED:
                # already looking there (or a nod holds the head): a blink shows it heard instead
                robot.execute(cmd.PlayAnimation(name=robot.vocabulary().blink))
        except AnimaError as exc:  # an acknowledgement that cannot be made is not an error
            log.debug("no wake glance: %s", exc)

    # ------------------------------------------------------------------ barge-in (duplex)
    def _barge_heard(self) -> None:
        if not self.robot.speaking:
            return  # the robot finished meanwhile: an ordinary turn
        self.barge.open()
        self.robot.call_later(self.barge.sustain_s, self._barge_sustained)

    def _barge_sustained(self) -> None:
        listener = self._listener()
        if self.barge.on_sustained(listener is not None and listener.voice_held):
            self._barge_stop(f"a voice over the robot for {self.barge.sustain_s:g} s")

    def partial(self, text: str) -> None:
        """A partial transcript: a stop word over the robot stops it at once."""
        if self.barge.on_partial(text):
            self._barge_stop(f"heard {text.strip()[:40]!r} over the robot")

    def gave_up(self, reason: str) -> None:
        """A round that ended without words: a sound over the robot (a cough) lets it go on."""
        if self.barge.on_gave_up():
            log.info("barge-in: no words (%s): the robot goes on", reason)

    def over_the_robot(self, transcript: Transcript) -> bool:
        """A final: True when it was heard over the robot and lets it go on (drop it); one that
        stops the robot stops it here, and is then planned as any request."""
        heard = transcript.text.strip()[:40]
        decision = self.barge.on_final(transcript.text, transcript.confidence)
        if decision == "go_on":
            log.info("barge-in: %r: the robot goes on", heard)
            return True
        if decision == "stop":
            self._barge_stop(f"heard {heard!r} over the robot")
        return False

    def _barge_stop(self, why: str) -> None:
        log.info("barge-in: %s: stopping", why)
        self.presence.to("interrupted", why)
        self.halt("interrupted")
        self.presence.to("listening", "the person goes on")
