"""The emergency stop: hold from the next tick, refuse moves until reset, resume smoothly."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

from anima.body import Body, FloatArray, load_body
from anima.drivers.sim import SimDriver
from anima.errors import AnimaError, CommandRefusedError, EStopActiveError
from anima.events import EStopChanged, Event, EventHub, MoveFinished, MoveStarted
from anima.motion import Breathing, Goto, Hold
from anima.testing import make_engine

pytestmark = pytest.mark.fast

Frames = Callable[[SimDriver], FloatArray]


def test_estop_holds_the_frame_from_the_next_tick(
    fast_body: Body, hub: EventHub, seen: list[Event], frames: Frames
) -> None:
    engine, driver, _ = make_engine(body=fast_body, events=hub)
    engine.queue_move(Goto(fast_body, {"arm": 900, "neck_yaw": 250}, 1.0))
    engine.queue_move(Goto(fast_body, {"arm": 0}, 1.0, name="next"))
    engine.set_offset("gaze", head=(0.0, 0.2, 0.0))
    engine.set_override_source("speech", ["lip_open"], lambda t: [100.0 + 500.0 * (t % 0.1)])
    engine.run(40)
    before = frames(driver)[-1].copy()
    engine.estop()
    assert engine.estopped
    engine.run(50)
    held = frames(driver)[40:]
    lips = [fast_body.index(n) for n in ("lip_open", "lip_wide", "lip_narrow")]
    still = [i for i in range(len(fast_body)) if i not in lips]
    assert (held[:, still] == before[still]).all()  # not one more unit of motion, but the lips…
    assert (held[:, lips] == fast_body.defaults()[lips]).all()  # …which go to rest (no limit here)
    hub.drain()
    assert [e.active for e in seen if isinstance(e, EStopChanged)] == [True]
    cut = {(e.name, e.reason) for e in seen if isinstance(e, MoveFinished)}
    assert cut == {("goto", "estop"), ("next", "estop")}
    state = engine.state()
    assert (state.move, state.queued, state.overrides, state.offsets) == (None, 0, (), ())
    assert state.estopped


def test_the_lips_return_to_rest_within_the_step_limit_and_stay_there(frames: Frames) -> None:
    # issue 12 item 8: speech estopped mid-word left the mouth frozen open
    body = load_body()
    engine, driver, _ = make_engine(body=body)
    lips = np.array([body.index(n) for n in ("lip_open", "lip_wide", "lip_narrow")])
    engine.set_override("speech", {"lip_open": 180.0, "lip_wide": 120.0})
    engine.run(100)
    before = frames(driver)[-1]
    assert before[lips[0]] == pytest.approx(180.0)  # the mouth is wide open
    engine.estop()
    engine.run(100)
    x = frames(driver)[100:]
    rest = body.defaults()
    step = body.max_speeds() * engine.period
    moves = np.abs(np.diff(np.vstack((before, x)), axis=0))
    assert (moves <= step + 1e-9).all()  # never faster than the safety stage allows
    assert x[0, lips[0]] < before[lips[0]]  # closing from the first held tick
    np.testing.assert_array_equal(x[-1, lips], rest[lips])  # closed, at rest
    others = np.setdiff1d(np.arange(len(body)), lips)
    assert (x[:, others] == before[others]).all()  # everything else held exactly
    engine.set_override("speech", {"lip_open": 180.0})  # a late lips update changes nothing
    engine.run(20)
    np.testing.assert_array_equal(frames(driver)[-20:, lips], np.tile(rest[lips], (20, 1)))


def test_refusals_name_the_move_and_the_way_out(fast_body: Body) -> None:
    engine, _, _ = make_engine(body=fast_body)
    engine.estop()
    with pytest.raises(
        EStopActiveError, match=r"^'wave' refused: emergency stop is active \(reset to resume\)$"
    ):
        engine.queue_move(Goto(fast_body, {"arm": 5}, 0.1, name="wave"))


def test_moves_are_refused_until_reset(fast_body: Body) -> None:
    engine, _, _ = make_engine(body=fast_body)
    engine.estop()
    with pytest.raises(EStopActiveError, match="reset"):
        engine.queue_move(Goto(fast_body, {"arm": 5}, 0.1))
    with pytest.raises(EStopActiveError):
        engine.play_now(Goto(fast_body, {"arm": 5}, 0.1))
    engine.run(5)
    with pytest.raises(AnimaError):
        engine.queue_move(Hold(fast_body, 1.0))
    engine.reset()
    assert not engine.estopped
    engine.queue_move(Goto(fast_body, {"arm": 5}, 0.1))
    engine.run(15)
    assert engine.last_frame[fast_body.index("arm")] == pytest.approx(5.0)


def test_estop_then_reset_before_a_tick_still_cuts(
    fast_body: Body, hub: EventHub, seen: list[Event]
) -> None:
    engine, _, _ = make_engine(body=fast_body, events=hub)
    engine.queue_move(Goto(fast_body, {"arm": 900}, 1.0))
    engine.run(10)
    engine.estop()
    engine.reset()
    engine.run(1)
    hub.drain()
    assert [(e.name, e.reason) for e in seen if isinstance(e, MoveFinished)] == [("goto", "estop")]
    assert [e.active for e in seen if isinstance(e, EStopChanged)] == [True, False]
    assert engine.state().move is None
    engine.run(1)
    engine.queue_move(Goto(fast_body, {"arm": 200}, 0.2, name="again"))
    engine.run(1)
    hub.drain()
    assert [e.name for e in seen if isinstance(e, MoveStarted)] == ["goto", "again"]


def test_commands_sent_just_before_the_estop_are_dropped_and_reported(
    fast_body: Body, hub: EventHub, seen: list[Event], frames: Frames
) -> None:
    engine, driver, _ = make_engine(body=fast_body, events=hub)
    engine.run(3)
    engine.queue_move(Goto(fast_body, {"arm": 900}, 0.2, name="late"))  # not yet drained
    engine.estop()
    engine.run(10)
    engine.reset()
    engine.run(40)
    assert (frames(driver) == fast_body.defaults()).all()
    hub.drain()
    assert [e.name for e in seen if isinstance(e, MoveStarted)] == []
    # the caller was told its accepted move will not run
    assert [(e.name, e.cut, e.reason) for e in seen if isinstance(e, MoveFinished)] == [
        ("late", True, "estop")
    ]


def test_idle_resumes_without_a_step_after_reset(
    fast_body: Body, hub: EventHub, seen: list[Event], frames: Frames
) -> None:
    breathing = Breathing(fast_body, period_s=2.0, amplitude_rad=0.2)  # ±20 units on the fast body
    engine, driver, _ = make_engine(body=fast_body, idle=[breathing], events=hub)
    pitch = fast_body.index("neck_pitch")
    engine.run(30)
    engine.estop()
    engine.run(70)  # held while breathing's target swings by ~20 units
    held = frames(driver)[30:100, pitch]
    assert (held == held[0]).all()
    engine.reset()
    engine.run(150)
    x = frames(driver)[:, pitch]
    assert np.ptp(x[100:]) > 15.0  # breathing is back…
    assert np.abs(np.diff(x[99:])).max() < 2.5  # …blended in, not jumped to
    hub.drain()
    assert [e.active for e in seen if isinstance(e, EStopChanged)] == [True, False]


def test_estop_is_a_refusal() -> None:
    assert issubclass(EStopActiveError, CommandRefusedError)
    assert issubclass(EStopActiveError, AnimaError)
