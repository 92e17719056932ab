"""Cancelling one move by name (an SDK handle's cancel): the others go on (issue 30 item 7)."""

from __future__ import annotations

import numpy as np
import pytest

from anima.events import EventHub, MoveFinished, MoveStarted
from anima.motion import Goto
from anima.testing import EventRecorder, make_engine

pytestmark = pytest.mark.fast


def test_cancel_drops_the_queued_move_of_that_name_only() -> None:
    hub = EventHub()
    seen = EventRecorder().attach(hub)
    engine, _, _ = make_engine(events=hub)
    body = engine.body
    engine.queue_move(Goto(body, {"r_elbow": 150.0}, 0.5, name="a"))
    engine.queue_move(Goto(body, {"r_elbow": 100.0}, 0.5, name="b"))
    engine.queue_move(Goto(body, {"r_elbow": 60.0}, 0.5, name="c"))
    engine.run(10)
    engine.cancel_move("b")
    engine.cancel_move("nothing-of-that-name")  # nothing to do
    engine.run(150)
    hub.drain()
    assert [e.name for e in seen.of(MoveStarted) if isinstance(e, MoveStarted)] == ["a", "c"]
    ends = [(e.name, e.cut, e.reason) for e in seen.of(MoveFinished) if isinstance(e, MoveFinished)]
    assert ends == [("b", True, "cancelled"), ("a", False, ""), ("c", False, "")]
    assert engine.last_frame[body.index("r_elbow")] == np.float64(60.0)


def test_cancel_of_the_running_move_decelerates_it_and_the_queue_goes_on() -> None:
    hub = EventHub()
    seen = EventRecorder().attach(hub)
    engine, driver, _ = make_engine(events=hub)
    body = engine.body
    elbow = body.index("r_elbow")
    engine.queue_move(Goto(body, {"r_elbow": 170.0}, 2.0, name="a"))
    engine.queue_move(Goto(body, {"r_elbow": 60.0}, 0.5, name="b"))
    engine.run(50)
    engine.cancel_move("a")
    engine.run(200)
    hub.drain()
    ends = [(e.name, e.cut, e.reason) for e in seen.of(MoveFinished) if isinstance(e, MoveFinished)]
    assert ends == [("a", True, "cancelled"), ("b", False, "")]
    elbow_path = np.array([f.values[elbow] for f in driver.history()])
    assert np.abs(np.diff(elbow_path)).max() < 2.0  # no jump: decelerated, then the next move
    assert engine.last_frame[elbow] == np.float64(60.0)
