"""The fake-time harness: the runtime ``build`` makes, on a FakeClock, stepped by the test;
the timers and clock waits it rests on; the scripted planner."""

from __future__ import annotations

import threading

import pytest

from anima import commands as cmd
from anima.config import AnimaConfig, BehaviourConfig
from anima.errors import EngineStateError
from anima.events import (
    ConversationChanged,
    MoveFinished,
    MoveStarted,
    SpeechEnded,
    SpeechStarted,
)
from anima.testing import FakeClock, FakeTimeRobot, ScriptedPlanner, reply
from anima.testing.planner import NOT_UNDERSTOOD
from anima.timers import Timers

pytestmark = pytest.mark.fast


def test_timers_run_in_time_order_when_due_and_a_cancel_holds() -> None:
    clock = FakeClock(start=0.0)
    timers = Timers(clock)
    ran: list[str] = []
    timers.call_later(2.0, lambda: ran.append("b"))
    timers.call_later(1.0, lambda: ran.append("a"))
    cancel = timers.call_later(1.5, lambda: ran.append("never"))
    timers.call_at(2.0, lambda: ran.append("b2"))  # same time: in the order asked
    cancel()
    cancel()  # twice is harmless
    assert timers.run_due() == 0
    clock.advance(1.0)
    assert timers.run_due() == 1
    assert timers.next_due() == 2.0
    clock.advance(5.0)
    assert timers.run_due() == 2
    assert ran == ["a", "b", "b2"]
    assert timers.pending == 0
    assert timers.next_due() is None


def test_a_failing_timer_is_logged_and_the_others_still_run(
    caplog: pytest.LogCaptureFixture,
) -> None:
    clock = FakeClock(start=0.0)
    timers = Timers(clock)
    ran: list[int] = []

    def fail() -> None:
        raise RuntimeError("as the test asks")

    timers.call_later(1.0, fail)
    timers.call_later(1.0, lambda: ran.append(1))
    clock.advance(1.0)
    assert timers.run_due() == 2
    assert ran == [1]
    assert "timer callback" in caplog.text


def test_the_timer_thread_waits_on_the_clock_it_was_given() -> None:
    clock = FakeClock(start=0.0)
    timers = Timers(clock)
    fired = threading.Event()
    timers.start()
    try:
        timers.call_later(30.0, fired.set)  # thirty seconds of fake time
        assert not fired.wait(0.1)  # real time passes; the fake clock does not
        clock.advance(29.0)
        assert not fired.wait(0.05)
        clock.advance(1.0)
        assert fired.wait(5.0)
        with pytest.raises(EngineStateError):
            timers.start()
    finally:
        timers.stop()


def test_fake_clock_wait_ends_on_the_event_or_on_fake_seconds() -> None:
    clock = FakeClock(start=0.0)
    event = threading.Event()
    results: list[bool] = []
    waiter = threading.Thread(target=lambda: results.append(clock.wait(event, 10.0)))
    waiter.start()
    assert _eventually(lambda: clock.waiting == 1)
    clock.advance(9.9)
    waiter.join(0.05)
    assert waiter.is_alive()  # 9.9 of its 10 s
    clock.advance(0.1)
    waiter.join(5.0)
    assert results == [False]
    event.set()
    assert clock.wait(event, 10.0) is True  # already set: at once
    assert clock.waiting == 0


def _eventually(predicate: object) -> bool:
    from anima.testing import eventually

    assert callable(predicate)
    return eventually(predicate, timeout=5.0)


def test_advance_runs_the_exact_ticks_and_nothing_moves_between_calls() -> None:
    with FakeTimeRobot() as robot:
        assert robot.advance(1.0) == 100
        sent = robot.driver.sent
        assert sent == 100
        assert robot.now == pytest.approx(1000.99)
        robot.execute(cmd.PlayAnimation(name="nod"))
        assert robot.driver.sent == sent  # no thread ticks behind the test's back
        assert robot.runtime.state().move is None  # queued, not yet drained by a tick
        started = robot.advance_until(MoveStarted, within=0.05)
        assert started.name == "nod"
        finished = robot.advance_until(MoveFinished, within=5.0)
        assert finished.t - started.t == pytest.approx(1.25, abs=0.02)  # the nod's length
        stats = robot.runtime.engine.stats()
        assert stats.missed == 0
        assert stats.ticks == robot.driver.sent


def test_advance_until_names_what_came_instead() -> None:
    with FakeTimeRobot() as robot:
        robot.execute(cmd.PlayAnimation(name="nod"))
        with pytest.raises(AssertionError, match=r"within 0\.5 s of fake time \(came: .*move"):
            robot.advance_until(lambda e: e.kind == "end_speak", within=0.5)


def test_step_is_only_for_a_stepped_runtime() -> None:
    robot = FakeTimeRobot()
    with pytest.raises(EngineStateError, match="stepped=True"):
        robot.runtime.step()


def test_speech_plays_on_the_fake_clock() -> None:
    with FakeTimeRobot() as robot:
        robot.execute(cmd.Speak(text="one two three four"))
        said = robot.settle_for(SpeechStarted)
        robot.settle(lambda: robot.sink.written() > 0)  # synthesized, not yet played
        assert robot.sink.played() == 0  # no fake time has passed
        robot.advance(0.5)
        assert robot.runtime.speaking  # four words are longer than half a second
        robot.advance(3.0)
        ended = robot.settle_for(SpeechEnded)
        assert ended.utterance == said.utterance
        assert ended.reason == "done"
        assert not robot.runtime.speaking


def test_the_agent_plans_with_the_scripted_planner_and_acts_in_fake_time() -> None:
    planner = ScriptedPlanner({"wave at me!": reply("Hello!", "play_animation('nod')")})
    with FakeTimeRobot(planner=planner) as robot:
        robot.execute(cmd.Ask(text="Wave at me"))
        # the words and the plan go out together: the nod is queued as "Hello!" starts
        robot.settle(lambda: robot.runtime.speaking and robot.runtime.moving)
        nod = robot.advance_until(MoveStarted, within=0.1)
        assert nod.name == "nod"
        assert nod.t == robot.now  # this very tick
        robot.advance(2.0)
        robot.settle_for("plan_finished")
        assert planner.requests == ["Wave at me"]
        said = [e.text for e in robot.recorder.of(SpeechStarted) if isinstance(e, SpeechStarted)]
        assert said == ["Hello!"]


def test_the_conversation_falls_idle_after_engaged_s_of_fake_time() -> None:
    cfg = AnimaConfig(behaviour=BehaviourConfig(full_blink_every_s=1000))  # engaged_s: 20
    planner = ScriptedPlanner()
    with FakeTimeRobot(cfg, planner=planner) as robot:
        robot.execute(cmd.Ask(text="something nobody scripted"))
        robot.settle_for(SpeechStarted)
        changed = robot.advance_until(
            lambda e: isinstance(e, ConversationChanged) and e.state == "engaged", within=4.0
        )  # the reply said: engaged_s runs from here
        robot.advance(19.9)
        assert robot.runtime.state().conversation == "engaged"
        idle = robot.advance_until(ConversationChanged, within=0.2)
        assert idle.state == "idle"
        assert idle.t - changed.t == pytest.approx(20.0, abs=0.011)
        said = [e.text for e in robot.recorder.of(SpeechStarted) if isinstance(e, SpeechStarted)]
        assert said == [NOT_UNDERSTOOD]
