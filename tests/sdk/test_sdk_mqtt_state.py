"""Over MQTT the SDK's state agrees with the events it waited on, and events carry their time
(issue 30 item 8): ``speaking`` was still true up to 250 ms after ``say(wait=True)`` returned
(the retained state comes 4 times a second), and every event said ``t = 0.0``."""

from __future__ import annotations

import pytest

from anima import Robot
from anima.events import Event, MoveFinished, SpeechEnded, SpeechStarted

from .conftest import TIMEOUT, Served

pytestmark = pytest.mark.integration


def test_state_after_say_and_play_wait_and_the_events_carry_their_time(served: Served) -> None:
    seen: list[Event] = []
    with Robot.connect(served.url, prefix=served.prefix, timeout=TIMEOUT) as robot:
        robot.on("start_speak", seen.append)
        robot.on("end_speak", seen.append)
        robot.on("animation_done", seen.append)
        for n in range(3):
            robot.say(f"hello {n}", wait=True)
            assert not robot.state().speaking  # at once, not after the next state message
        robot.play("nod", wait=True)
        assert robot.state().move is None
        clock = served.runtime.engine.clock.now()
    kinds = [type(e) for e in seen]
    assert kinds.count(SpeechStarted) == 3
    assert kinds.count(SpeechEnded) == 3
    assert MoveFinished in kinds
    for event in seen:
        assert 0 < event.t <= clock, event
