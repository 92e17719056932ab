"""The duplex rules' yield at onset, on a fake clock with a scripted VAD and a fake robot: a
voice beginning over the robot pauses its voice at the 2nd voiced frame; the rules then stop it
(a stop word, a held voice) or resume it (a backchannel, no words); a false onset (no
``speech_started`` within ``confirm_s``, or the voice over again at once) resumes and is
counted; without the switch nothing pauses."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

from anima.agent.realtime.duplex import (
    CONFIRM_S,
    HEARD,
    HEARD_DELTA,
    MAX_PAUSE_S,
    QUIET_FRAMES,
    SPEECH_STARTED,
    SPEECH_STOPPED,
    Duplex,
)
from anima.audio import FRAME_SAMPLES, Frame
from anima.config.planner import RealtimePlannerConfig
from anima.errors import ConfigError
from anima.testing import FakeClock

pytestmark = pytest.mark.fast

SUSTAIN_S = 0.8
VOICED = np.ones(FRAME_SAMPLES, np.int16)
QUIET = np.zeros(FRAME_SAMPLES, np.int16)
FRAME_S = FRAME_SAMPLES / 16_000


class ScriptedVad:
    """A frame of ones is a voice, of zeros none."""

    name = "scripted"

    def probability(self, frame: Frame) -> float:
        return float(frame[0])


class Robot:
    """What the duplex rules need of a robot: its clock, its timers (fired by :meth:`run`),
    whether it speaks; and the session's side: its voice paused, resumed, cut."""

    def __init__(self) -> None:
        self.clock = FakeClock()
        self.speaking = True
        self._timers: list[tuple[float, int, Callable[[], None]]] = []
        self.log: list[tuple[float, str]] = []  # (time, what the session was asked)
        self.paused = False

    def call_later(self, seconds: float, fn: Callable[[], None]) -> Callable[[], None]:
        self._timers.append((self.clock.now() + seconds, len(self._timers), fn))
        return lambda: None

    def run(self, seconds: float) -> None:
        """Move time on by ``seconds``, firing the timers due on the way, in order."""
        until = self.clock.now() + seconds
        while True:
            due = sorted(t for t in self._timers if t[0] <= until)
            if not due:
                break
            self._timers.remove(due[0])
            self.clock.advance(max(0.0, due[0][0] - self.clock.now()))
            due[0][2]()
        self.clock.advance(until - self.clock.now())

    def pause(self) -> bool:
        if self.paused:
            return False
        self.paused = True
        self.log.append((self.clock.now(), "pause"))
        return True

    def resume(self) -> bool:
        was, self.paused = self.paused, False
        self.log.append((self.clock.now(), "resume"))
        return was

    def said(self) -> list[str]:
        return [what for _, what in self.log]


def rig(*, yield_at_onset: bool = True, local_voice: bool = False) -> tuple[Robot, Duplex]:
    """The rules on a fake robot; ``local_voice``: anima's VAD opens and ends the voice (a
    server that reports none, as Gemini's)."""
    robot = Robot()
    duplex: Duplex

    def interrupt(why: str) -> None:
        robot.log.append((robot.clock.now(), f"stop: {why}"))
        robot.paused = False
        duplex.yield_over()  # as Session.interrupt does

    duplex = Duplex(
        robot,  # type: ignore[arg-type]  # the part of RobotPort the rules use
        interrupt=interrupt,
        respond=lambda: robot.log.append((robot.clock.now(), "respond")),
        pause=robot.pause,
        resume=robot.resume,
        barge_in_s=SUSTAIN_S,
    )
    duplex.listen_with(
        ScriptedVad(),  # type: ignore[arg-type]  # the part of Vad the rules use
        yield_at_onset=yield_at_onset,
        local_voice=local_voice,
    )
    return robot, duplex


def frames(robot: Robot, duplex: Duplex, *pattern: Frame) -> None:
    """Hear ``pattern``, one 32 ms frame each 32 ms of the robot's time."""
    for frame in pattern:
        duplex.hear(frame)
        robot.run(FRAME_S)


def test_the_second_voiced_frame_over_the_robot_pauses_its_voice() -> None:
    robot, duplex = rig()
    frames(robot, duplex, QUIET, VOICED, QUIET, VOICED, QUIET)  # single frames: clicks
    assert robot.said() == []
    t0 = robot.clock.now()
    duplex.hear(VOICED)
    assert robot.said() == []
    duplex.hear(VOICED)  # the 2nd in a row: at once, on the microphone's thread
    assert robot.log == [(t0, "pause")]
    assert duplex.yields == 1


def test_a_loud_start_the_vad_calls_unvoiced_pauses_it_as_soon() -> None:
    """A word's unvoiced start ("s" of "stop": Silero hears the vowel 110-160 ms later) stands
    over the room's floor: two such frames pause the voice as two voiced ones would; a single
    loud frame (a click) does not."""
    robot, duplex = rig()
    hiss = np.full(FRAME_SAMPLES, 3000, np.int16)
    hiss[0] = 0  # the scripted VAD: not voiced
    frames(robot, duplex, *(QUIET,) * 5, hiss, QUIET)
    assert robot.said() == []
    t0 = robot.clock.now()
    duplex.hear(hiss)
    duplex.hear(hiss)
    assert robot.log == [(t0, "pause")]


def test_no_pause_while_the_robot_is_silent_or_with_the_switch_off() -> None:
    robot, duplex = rig()
    robot.speaking = False
    frames(robot, duplex, *[VOICED] * 10)
    assert robot.said() == []
    robot, duplex = rig(yield_at_onset=False)
    frames(robot, duplex, *[VOICED] * 10)
    assert robot.said() == []


def test_a_false_onset_resumes_after_confirm_s_and_is_counted() -> None:
    robot, duplex = rig()
    frames(robot, duplex, VOICED, VOICED)
    paused_at = robot.clock.now()
    duplex.hear(VOICED)  # still voiced: not over quickly, so only confirm_s can end it
    robot.run(CONFIRM_S - 0.01 - FRAME_S)
    assert robot.said() == ["pause"]
    robot.run(0.02)
    assert robot.said() == ["pause", "resume"]
    assert robot.log[1][0] == pytest.approx(paused_at - FRAME_S + CONFIRM_S)
    assert duplex.false_onsets == 1
    assert list(duplex.pauses_s) == [pytest.approx(CONFIRM_S)]


def test_a_voice_over_at_once_with_no_speech_started_resumes_at_its_quiet_frames() -> None:
    robot, duplex = rig()
    frames(robot, duplex, VOICED, VOICED)
    frames(robot, duplex, *[QUIET] * (QUIET_FRAMES - 1))
    assert robot.said() == ["pause"]
    duplex.hear(QUIET)
    assert robot.said() == ["pause", "resume"]
    assert duplex.false_onsets == 1
    robot.run(CONFIRM_S)  # the confirm timer of that pause does nothing now
    assert robot.said() == ["pause", "resume"]
    assert duplex.false_onsets == 1


def test_a_stop_word_after_the_pause_stops_the_robot_and_nothing_resumes() -> None:
    robot, duplex = rig()
    frames(robot, duplex, VOICED, VOICED)
    duplex.handle(SPEECH_STARTED, {})  # the server hears it: confirmed
    frames(robot, duplex, *[VOICED] * 4, *[QUIET] * 12)  # "stop", then quiet: no false onset
    duplex.handle(HEARD_DELTA, {"delta": "Stop"})
    robot.run(MAX_PAUSE_S + 1)
    assert robot.said() == ["pause", "stop: heard 'Stop' over the robot"]
    assert duplex.false_onsets == 0


def test_a_held_voice_stops_the_robot_at_barge_in_s_still_paused_until_then() -> None:
    robot, duplex = rig()
    frames(robot, duplex, VOICED, VOICED)
    duplex.handle(SPEECH_STARTED, {})
    frames(robot, duplex, *[VOICED] * 30)  # 0.96 s: past barge_in_s
    said = robot.said()
    assert said == ["pause", "stop: a voice over the robot for 0.8 s"]
    assert robot.log[1][0] - robot.log[0][0] == pytest.approx(SUSTAIN_S + FRAME_S, abs=0.01)


def test_a_backchannel_resumes_at_its_first_words_and_asks_no_answer() -> None:
    robot, duplex = rig()
    frames(robot, duplex, VOICED, VOICED)
    duplex.handle(SPEECH_STARTED, {})
    frames(robot, duplex, *[VOICED] * 6)
    duplex.handle(HEARD_DELTA, {"delta": "Mm-hmm."})
    assert robot.said() == ["pause", "resume"]
    frames(robot, duplex, *[QUIET] * 10)
    duplex.handle(SPEECH_STOPPED, {})
    duplex.handle(HEARD, {"transcript": "Mm-hmm."})
    robot.run(MAX_PAUSE_S + 1)
    assert robot.said() == ["pause", "resume"]  # no stop, no answer
    assert duplex.false_onsets == 0


def test_a_backchannel_transcribed_after_the_turn_resumes_at_the_transcript() -> None:
    robot, duplex = rig()
    frames(robot, duplex, VOICED, VOICED)
    duplex.handle(SPEECH_STARTED, {})
    frames(robot, duplex, *[VOICED] * 6, *[QUIET] * 16)  # 0.26 s of voice, 0.5 s of quiet
    duplex.handle(SPEECH_STOPPED, {})
    robot.run(0.1)
    assert robot.said() == ["pause"]  # undecided: still paused
    t = robot.clock.now()
    duplex.handle(HEARD, {"transcript": "Mm-hmm."})
    assert robot.log[-1] == (t, "resume")
    robot.run(MAX_PAUSE_S + 1)
    assert robot.said() == ["pause", "resume"]


def test_other_words_in_the_final_stop_the_robot_and_are_answered() -> None:
    robot, duplex = rig()
    frames(robot, duplex, VOICED, VOICED)
    duplex.handle(SPEECH_STARTED, {})
    frames(robot, duplex, *[VOICED] * 6, *[QUIET] * 16)
    duplex.handle(SPEECH_STOPPED, {})
    duplex.handle(HEARD, {"transcript": "What time is it?"})
    assert robot.said() == ["pause", "stop: heard 'What time is it?' over the robot", "respond"]


def test_the_server_hearing_first_pauses_the_voice_and_confirms_it() -> None:
    robot, duplex = rig()
    duplex.handle(SPEECH_STARTED, {})  # before any voiced frame: the server's VAD was first
    assert robot.said() == ["pause"]
    frames(robot, duplex, *[QUIET] * (QUIET_FRAMES + 2))
    robot.run(CONFIRM_S)
    assert robot.said() == ["pause"]  # confirmed: only the rules (or the bound) end it
    duplex.handle(SPEECH_STOPPED, {})
    robot.run(MAX_PAUSE_S)
    assert robot.said() == ["pause", "resume"]  # no transcript in final_wait_s: no words
    assert duplex.false_onsets == 0


def test_an_undecided_pause_ends_after_max_pause_s() -> None:
    robot, duplex = rig()
    duplex.handle(SPEECH_STARTED, {})
    t0 = robot.clock.now()
    frames(robot, duplex, *[VOICED, VOICED, QUIET, QUIET] * 60)  # never held, never over
    resumes = [t for t, what in robot.log if what == "resume"]
    assert resumes == [pytest.approx(t0 + MAX_PAUSE_S, abs=FRAME_S)]


def test_the_switch_is_on_by_default_and_checked() -> None:
    assert RealtimePlannerConfig().yield_at_onset is True
    assert RealtimePlannerConfig(yield_at_onset=False).yield_at_onset is False
    with pytest.raises(ConfigError, match=r"agent\.planner\.yield_at_onset must be true or false"):
        RealtimePlannerConfig(yield_at_onset="yes")  # type: ignore[arg-type]
