"""The duplex rules for a server that reports no voice (Gemini Live), on a fake clock with a
scripted VAD and a fake robot (``listen_with(local_voice=True)``): anima's VAD opens and ends
the voice over the robot, the server's transcript of the person (``words``) feeds the same
rules — a stop word or a held voice stops the robot, a backchannel or no words resumes it —
and a voice while the robot is silent is the server's turn to take: nothing is done."""

from __future__ import annotations

import numpy as np
import pytest

from anima.agent.realtime.duplex import (
    CONFIRM_S,
    LOCAL_END_FRAMES,
    MAX_PAUSE_S,
    WORDS_GRACE_S,
    Duplex,
)
from anima.audio import FRAME_SAMPLES

from .test_realtime_yield import FRAME_S, QUIET, SUSTAIN_S, VOICED, Robot, frames
from .test_realtime_yield import rig as yield_rig

pytestmark = pytest.mark.fast


def rig() -> tuple[Robot, Duplex]:
    return yield_rig(local_voice=True)


def test_a_voice_held_over_the_robot_pauses_it_at_once_and_stops_it_at_barge_in_s() -> None:
    robot, duplex = rig()
    frames(robot, duplex, VOICED, VOICED)
    assert robot.said() == ["pause"]
    paused_at = robot.log[0][0]
    frames(robot, duplex, *[VOICED] * 30)  # 0.96 s of voice, no word from the server
    assert robot.said() == ["pause", "stop: a voice over the robot for 0.8 s"]
    assert robot.log[1][0] - paused_at == pytest.approx(SUSTAIN_S, abs=FRAME_S + 0.01)
    assert duplex.false_onsets == 0  # the VAD's voice confirmed the pause: no confirm_s resume


def test_a_stop_word_in_the_servers_transcript_stops_the_robot() -> None:
    robot, duplex = rig()
    frames(robot, duplex, *[VOICED] * 6)
    duplex.words(" Stop")
    assert robot.said() == ["pause", "stop: heard 'Stop' over the robot"]
    frames(robot, duplex, *[QUIET] * (LOCAL_END_FRAMES + 2))
    robot.run(MAX_PAUSE_S + 1)
    assert robot.said() == ["pause", "stop: heard 'Stop' over the robot"]  # nothing asked


def test_a_stop_word_said_again_within_the_same_voice_is_that_voices_word() -> None:
    # the voice stays open LOCAL_END_FRAMES after its last voiced frame: a second "stop" in it
    # belongs to the voice that decided already; once it ended, a new voice is judged afresh
    robot, duplex = rig()
    assert not duplex.voice_open
    frames(robot, duplex, *[VOICED] * 6)
    assert duplex.voice_open
    duplex.words(" Stop")
    frames(robot, duplex, *[QUIET] * (LOCAL_END_FRAMES - 2), *[VOICED] * 6)
    duplex.words(" stop")
    stops = [said for said in robot.said() if said.startswith("stop")]
    assert stops == ["stop: heard 'Stop' over the robot"]  # decided once, in that voice
    frames(robot, duplex, *[QUIET] * (LOCAL_END_FRAMES + 1))
    assert not duplex.voice_open
    frames(robot, duplex, *[VOICED] * 6)
    duplex.words(" Stop")
    stops = [said for said in robot.said() if said.startswith("stop")]
    assert stops == ["stop: heard 'Stop' over the robot"] * 2  # a new voice, a new decision


def test_a_backchannel_resumes_the_robot_and_nothing_stops_it_after() -> None:
    robot, duplex = rig()
    frames(robot, duplex, *[VOICED] * 8)
    duplex.words("Mm-hmm.")
    assert robot.said() == ["pause", "resume"]
    frames(robot, duplex, *[QUIET] * (LOCAL_END_FRAMES + 2))
    robot.run(MAX_PAUSE_S + 1)
    assert robot.said() == ["pause", "resume"]
    assert duplex.false_onsets == 0


def test_a_short_voice_without_words_resumes_after_its_end_and_the_grace() -> None:
    robot, duplex = rig()
    frames(robot, duplex, *[VOICED] * 8)  # 0.26 s: a cough, a laugh
    frames(robot, duplex, *[QUIET] * (LOCAL_END_FRAMES - 1))
    assert robot.said() == ["pause"]
    duplex.hear(QUIET)  # the voice's end by anima's VAD
    ended = robot.clock.now()
    robot.run(WORDS_GRACE_S + 0.01)
    assert robot.said() == ["pause", "resume"]
    assert robot.log[-1][0] == pytest.approx(ended + WORDS_GRACE_S)


def test_words_of_a_short_voice_arriving_after_its_end_stop_the_robot() -> None:
    robot, duplex = rig()
    frames(robot, duplex, *[VOICED] * 8, *[QUIET] * LOCAL_END_FRAMES)
    duplex.words("What time")  # the server's transcript, late: within the grace
    duplex.words(" is it?")
    robot.run(WORDS_GRACE_S + 0.01)
    assert robot.said() == ["pause", "stop: heard 'What time is it?' over the robot"]
    assert "respond" not in robot.said()  # the server answers by itself


def test_a_voice_while_the_robot_is_silent_is_left_to_the_server() -> None:
    robot, duplex = rig()
    robot.speaking = False
    frames(robot, duplex, *[VOICED] * 40)
    duplex.words("What time is it?")
    frames(robot, duplex, *[QUIET] * (LOCAL_END_FRAMES + 2))
    robot.run(MAX_PAUSE_S + 1)
    assert robot.said() == []  # no pause, no stop, no answer asked: Google's VAD takes turns


def test_words_without_a_voice_heard_are_not_acted_on() -> None:
    robot, duplex = rig()
    duplex.words("Stop")
    robot.run(MAX_PAUSE_S + 1)
    assert robot.said() == []


def test_a_loud_onset_the_vad_never_calls_a_voice_resumes_as_a_false_onset() -> None:
    """The robot's own echo or a knock: the level pauses the voice, the VAD never hears a voice
    (no round is opened), so nothing confirms it."""
    robot, duplex = rig()
    hiss = np.full(FRAME_SAMPLES, 3000, np.int16)
    hiss[0] = 0  # the scripted VAD: not voiced
    frames(robot, duplex, *(QUIET,) * 5)
    frames(robot, duplex, *[hiss] * 25)  # 0.8 s of it: over confirm_s, never quiet
    assert robot.said() == ["pause", "resume"]
    assert duplex.false_onsets == 1
    assert list(duplex.pauses_s) == [pytest.approx(CONFIRM_S, abs=FRAME_S + 0.01)]


def test_without_local_voice_words_are_ignored() -> None:
    robot, duplex = rig()
    duplex.local_voice = False
    frames(robot, duplex, *[VOICED] * 4)
    duplex.words("Stop")
    assert robot.said() == ["pause"]
