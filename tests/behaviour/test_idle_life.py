"""Idle life's full blink is not a command: no ``animation_done`` for it (issue 30 item 7)."""

from __future__ import annotations

import json

import pytest

from anima import commands as cmd
from anima.config import AnimaConfig, BehaviourConfig
from anima.events import MoveFinished
from anima.frontdoors.mqtt.feedback import Feedback
from anima.testing import FakeTimeRobot
from anima.wire.topics import Topics

pytestmark = pytest.mark.fast

FULL_BLINK = "LOOKUPPostureDefaultBlink"


def test_the_idle_full_blink_publishes_no_animation_done_a_commanded_one_does() -> None:
    """It published ``animation_done`` every 8 s: a client playing the same animation would
    pair the idle blink's end with its own command."""
    cfg = AnimaConfig(behaviour=BehaviourConfig(full_blink_every_s=8.0))
    sent: list[tuple[str, str]] = []
    with FakeTimeRobot(cfg) as robot:
        topics = Topics(prefix="nadine")
        feedback = Feedback(
            topics,
            lambda topic, payload, **_: sent.append((topic, payload)),
            robot.runtime.behaviour.library,
            lambda: None,
        )
        unsubscribe = feedback.subscribe(robot.runtime.events)
        robot.advance(8.0 + 1.0)  # one full blink, played to its end
        assert robot.runtime.idle_life.full_blinks == 1
        idle = robot.recorder.of(MoveFinished)
        assert [e.name for e in idle if isinstance(e, MoveFinished)] == [f"idle:{FULL_BLINK}"]
        done = topics.feedback("animation_done")
        assert [t for t, _ in sent if t == done] == []

        robot.execute(cmd.PlayAnimation(name=FULL_BLINK))  # the same animation, commanded
        robot.advance_until(
            lambda e: isinstance(e, MoveFinished) and e.name == FULL_BLINK, within=2
        )
        robot.advance(0.05)
        payloads = [json.loads(p) for t, p in sent if t == done]
        assert [(p["name"], p["cut"], p["reason"]) for p in payloads] == [
            (FULL_BLINK, False, "done")
        ]
        for stop in unsubscribe:
            stop()
