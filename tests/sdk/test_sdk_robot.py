"""Every Robot method, against the simulated robot in-process, over MQTT and over REST
(``robot`` fixture)."""

from __future__ import annotations

import dataclasses

import pytest

from anima import Robot
from anima.config import BehaviourConfig
from anima.drivers.sim import SimDriver
from anima.errors import (
    CommandRejectedByRobotError,
    EStopActiveError,
    InvalidCommandError,
    NotSupportedError,
    RobotTimeoutError,
    UnknownAnimationError,
)
from anima.events import Event, MoveFinished, SpeechEnded, SpeechStarted
from anima.speech.sinks import NullSink
from anima.testing import FakeClock
from anima.testing.events import EventRecorder
from anima.testing.tts import ScriptedEngine

from .conftest import TIMEOUT, eventually, sdk_config, tick_until

pytestmark = pytest.mark.integration

QUICK = "LOOKUPPostureDefaultBlink"  # a 0.24 s gesture that needs no reset move first
LONG = "one two three four five six seven eight nine ten eleven twelve thirteen fourteen"


class Seen(EventRecorder):
    """Events handed to a Robot.on() callback (anima.testing.EventRecorder)."""

    def wait(self, count: int = 1, timeout: float = 5.0) -> list[Event]:
        self.wait_for(lambda _e: True, timeout, count=count)
        return self.events


def test_say_and_wait_returns_after_end_speak(robot: Robot) -> None:
    started, ended = Seen(), Seen()
    robot.on("start_speak", started)
    robot.on("end_speak", ended)
    handle = robot.say("hello there", wait=True)
    assert handle.done
    assert handle.reason == "done"
    (start,) = started.wait()
    (end,) = ended.wait()
    assert isinstance(start, SpeechStarted)
    assert start.text == "hello there"
    assert isinstance(end, SpeechEnded)
    assert end.utterance == start.utterance == handle.utterance


def test_annotated_say_waits_for_its_own_end_speak(robot: Robot) -> None:
    # start_speak shows the text without its markers: the handle is paired with it all the same
    handle = robot.say("Hello ^start(nod) there, my friend", wait=True, timeout=15)
    assert handle.reason == "done"
    assert handle.utterance


def test_say_is_non_blocking_and_a_cancelled_handle_stops_its_speech(
    robot: Robot, clock: FakeClock
) -> None:
    with clock.hold():  # the long utterance cannot end before it is cancelled
        handle = robot.say(LONG, locale="en-US")
        assert not handle.done
        tick_until(clock, lambda: robot.state().speaking)
        handle.cancel()
        tick_until(clock, lambda: handle.done)
    assert handle.wait(5) == "stopped"
    handle.cancel()  # a finished handle is left alone


def test_stop_speaking_ends_the_utterance(robot: Robot, clock: FakeClock) -> None:
    with clock.hold():
        handle = robot.say(LONG)
        tick_until(clock, lambda: bool(handle.utterance))
        robot.stop_speaking()
        tick_until(clock, lambda: handle.done)
    assert handle.wait(5) == "stopped"


def test_play_and_wait_reports_animation_done(robot: Robot) -> None:
    done = Seen()
    unsubscribe = robot.on("animation_done", done)
    handle = robot.play("nod", wait=True)
    assert handle.reason == "done"
    (event,) = done.wait()
    assert isinstance(event, MoveFinished)
    assert event.name == "nod"
    assert not event.cut
    unsubscribe()
    robot.play(QUICK, wait=True)
    assert len(done.events) == 1  # unsubscribed: no more calls


def test_a_cancelled_handle_stops_its_animation(robot: Robot, clock: FakeClock) -> None:
    with clock.hold():  # the 4.6 s wave cannot end before it is cancelled
        handle = robot.play("LOOKUP_Waving")
        tick_until(clock, lambda: robot.state().move == "LOOKUP_Waving")
        handle.cancel()
        tick_until(clock, lambda: handle.done)
    assert handle.wait(5) == "cancelled"
    eventually(lambda: robot.state().move != "LOOKUP_Waving")


def test_a_cancelled_handle_ends_its_own_animation_only(robot: Robot, clock: FakeClock) -> None:
    """Issue 30 item 7: cancel() stopped all motion (stop_animation), other plays included."""
    with clock.hold():  # the 4.6 s wave cannot end before it is cancelled
        wave = robot.play("LOOKUP_Waving")
        quick = robot.play(QUICK)  # queued behind the wave
        tick_until(clock, lambda: robot.state().move == "LOOKUP_Waving")
        quick.cancel()  # the waiting one: dropped, the wave goes on
        tick_until(clock, lambda: quick.done)
        assert quick.wait(5) == "cancelled"
        assert robot.state().move == "LOOKUP_Waving"
        assert not wave.done
        after = robot.play(QUICK)
        wave.cancel()  # the running one: brought to a hold, what waits behind it still plays
        tick_until(clock, lambda: wave.done)
    assert wave.wait(5) == "cancelled"
    assert after.wait(5) == "done"


def test_idle_animations_are_done_at_once(robot: Robot) -> None:
    assert robot.play("blink").done


def test_unknown_animation_is_refused_with_the_runtimes_reason(robot: Robot) -> None:
    with pytest.raises((UnknownAnimationError, CommandRejectedByRobotError)) as info:
        robot.play("nodd", wait=True)
    assert "unknown animation 'nodd'" in str(info.value)
    if isinstance(info.value, CommandRejectedByRobotError):  # the error topic, or REST's answer
        assert info.value.reason.startswith("unknown animation 'nodd'")
        assert info.value.command.endswith(("/agent/control/animation", "/api/animation"))


def test_look_at_and_gaze_targets(robot: Robot) -> None:
    robot.look_at(1.0, 0.3, 0.1)
    eventually(lambda: robot.state().looking)
    robot.look_at_target("Posture_LookAtInterviewer")
    eventually(lambda: robot.state().gaze_target == "Posture_LookAtInterviewer")
    robot.end_look_at()
    eventually(lambda: robot.state().gaze_target is None)


def test_estop_refuses_moves_until_reset(robot: Robot) -> None:
    robot.estop()
    eventually(lambda: robot.state().estop)
    with pytest.raises((EStopActiveError, CommandRejectedByRobotError), match="emergency stop"):
        robot.play("nod", wait=True)
    robot.reset()
    eventually(lambda: not robot.state().estop)
    assert robot.play(QUICK, wait=True).reason == "done"


def test_state_is_a_typed_snapshot(robot: Robot) -> None:
    state = robot.state()
    assert state.driver_connected
    assert not state.estop
    assert not state.shutdown
    assert state.humanoid is None
    assert state.t >= 0


def test_waiting_longer_than_the_timeout_raises(robot: Robot, clock: FakeClock) -> None:
    with clock.hold():  # no fake time passes while the SDK waits 0.05 real seconds
        handle = robot.say(LONG)
        with pytest.raises(RobotTimeoutError, match="did not end within"):
            handle.wait(timeout=0.05)
        with pytest.raises(TimeoutError):  # also a builtin TimeoutError
            robot.play("LOOKUP_Waving", wait=True, timeout=0.05)
        handle.cancel()


def test_unknown_event_kinds_are_refused(robot: Robot) -> None:
    with pytest.raises(InvalidCommandError, match="end_speak"):
        robot.on("speech_over", lambda _e: None)


def test_humanoid_needs_a_linked_humanoid(robot: Robot) -> None:
    with pytest.raises(NotSupportedError, match="humanoid"):
        _ = robot.humanoid


def test_the_local_robot_is_told_which_animation_became_an_idle_layer(clock: FakeClock) -> None:
    # issue 31: the local backend reads Runtime.execute's Played(idle_layer) instead of
    # guessing by name: a config's own blink animation (not "blink") is done at once too
    config = sdk_config()
    behaviour = BehaviourConfig(full_blink_every_s=600.0, blink_animation="nod")
    config = dataclasses.replace(config, behaviour=behaviour)
    with Robot.local(
        config,
        driver=SimDriver(),
        clock=clock,
        tts=[ScriptedEngine()],
        audio_sink=NullSink(clock),
        timeout=TIMEOUT,
    ) as robot:
        with clock.hold():  # the shake cannot end before it is looked at
            handle = robot.play("nod")
            assert handle.done
            assert handle.reason == "done"
            assert robot.state().move is None  # an idle layer, not a move
            shake = robot.play("shake")  # a move: done only with its animation_done
            assert not shake.done
        assert shake.wait(5) == "done"
