"""Primary moves: Goto, Keyframes, Hold; the queue, play_now, clear; start/finish events."""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import pytest

from anima.body import Body, FloatArray
from anima.drivers.sim import SimDriver
from anima.errors import InvalidCommandError, NonFiniteValueError, UnknownPostureError
from anima.events import Event, EventHub, MoveFinished, MoveStarted
from anima.motion import Goto, Hold, Keyframes
from anima.motion.minjerk import min_jerk
from anima.testing import FakeClock, make_engine

pytestmark = pytest.mark.fast

Frames = Callable[[SimDriver], FloatArray]
PERIOD = 0.01


def _started(seen: list[Event]) -> list[MoveStarted]:
    return [e for e in seen if isinstance(e, MoveStarted)]


def _finished(seen: list[Event]) -> list[MoveFinished]:
    return [e for e in seen if isinstance(e, MoveFinished)]


def test_min_jerk_profile() -> None:
    assert min_jerk(-1.0) == 0.0
    assert min_jerk(0.0) == 0.0
    assert min_jerk(0.5) == pytest.approx(0.5)
    assert min_jerk(1.0) == 1.0
    assert min_jerk(2.0) == 1.0
    xs = np.linspace(0, 1, 101)
    ys = np.array([min_jerk(x) for x in xs])
    assert (np.diff(ys) >= 0).all()
    # zero velocity at both ends
    assert min_jerk(0.01) < 1e-4
    assert 1.0 - min_jerk(0.99) < 1e-4


def test_goto_follows_min_jerk_and_reaches_target_at_duration(
    fast_body: Body, hub: EventHub, seen: list[Event], frames: Frames
) -> None:
    engine, driver, _ = make_engine(body=fast_body, events=hub)
    arm = fast_body.index("arm")
    engine.queue_move(Goto(fast_body, {"arm": 600}, 1.0))
    engine.run(120)
    x = frames(driver)[:, arm]
    # the first tick is already 1/100 of the way: the move's t=0 is the previous frame
    expected = np.array([100 + 500 * min_jerk((k + 1) / 100) for k in range(120)])
    np.testing.assert_allclose(x, expected, atol=1e-6)
    assert x[98] < 600.0
    assert x[99] == pytest.approx(600.0)
    assert (x[99:] == x[99]).all()
    hub.drain()
    assert [
        (type(e).__name__, e.name) for e in seen if isinstance(e, MoveStarted | MoveFinished)
    ] == [
        ("MoveStarted", "goto"),
        ("MoveFinished", "goto"),
    ]
    start, end = _started(seen)[0], _finished(seen)[0]
    assert start.duration == 1.0
    assert end.cut is False
    assert end.reason == ""
    assert end.t - (start.t - PERIOD) == pytest.approx(1.0)
    # only the arm moved
    others = np.delete(frames(driver), arm, axis=1)
    assert (others == np.delete(fast_body.defaults(), arm)).all()


def test_goto_starts_from_the_last_commanded_frame_not_the_unreached_target(
    hub: EventHub, seen: list[Event], frames: Frames
) -> None:
    engine, driver, _ = make_engine(events=hub)  # the real body: neck_yaw moves ≤ 5 units a tick
    body = engine.body
    yaw = body.index("neck_yaw")
    assert body.max_speeds()[yaw] * PERIOD == pytest.approx(5.0)
    engine.queue_move(Goto(body, {"neck_yaw": 216}, 0.03))  # far too fast: the limiter holds it
    engine.queue_move(Goto(body, {"neck_yaw": 150}, 0.5, name="second"))
    engine.run(80)
    hub.drain()
    second = next(e for e in _started(seen) if e.name == "second")
    x = frames(driver)[:, yaw]
    k0 = round((second.t - 1000.0) / PERIOD)  # index of the second move's first tick
    origin = x[k0 - 1]  # what was actually sent when it began
    assert origin < 216 - 50  # the first goto never got near its target
    expected = np.array([origin + (150 - origin) * min_jerk((j + 1) / 50) for j in range(50)])
    np.testing.assert_allclose(x[k0 : k0 + 50], expected, atol=1e-6)


def test_goto_posture_sends_the_channels_it_does_not_name_to_their_defaults() -> None:
    # issue 12 item 10: "eased to rest posture" left r_shoulder_roll, brows, r_wrist_yaw and
    # r_hand where the wave had them, because "rest" names only 13 of the 28 channels
    engine, driver, _ = make_engine()
    body = engine.body
    named = body.posture("rest").values
    assert "r_shoulder_roll" not in named
    away = {ch.name: ch.max for ch in body.channels}
    engine.queue_move(Goto(body, away, 0.5))  # every channel at its maximum
    engine.queue_move(Goto.posture(body, "rest", 1.0))
    engine.run(400)
    expected = body.defaults()
    for name, value in named.items():
        expected[body.index(name)] = value
    np.testing.assert_allclose(driver.history()[-1].values, expected)
    assert len(Goto.posture(body, "rest", 1.0).channels) == len(body)


def test_goto_posture_and_bad_arguments(fast_body: Body) -> None:
    engine, driver, _ = make_engine()
    body = engine.body
    engine.queue_move(Goto.posture(body, "rest", 0.3))
    engine.run(120)
    last = driver.history()[-1].values
    for name, value in body.posture("rest").values.items():
        assert last[body.index(name)] == pytest.approx(value)
    with pytest.raises(UnknownPostureError):
        Goto.posture(body, "cartwheel", 1.0)
    with pytest.raises(InvalidCommandError, match="empty"):
        Goto(fast_body, {}, 1.0)
    with pytest.raises(NonFiniteValueError):
        Goto(fast_body, {"arm": math.nan}, 1.0)
    for bad in (-1.0, math.nan, math.inf):
        with pytest.raises(InvalidCommandError, match="duration"):
            Goto(fast_body, {"arm": 5}, bad)
    with pytest.raises(TypeError):
        engine.queue_move("wave")  # type: ignore[arg-type]


@pytest.mark.parametrize("start", [1000.0, 0.0, 12345.678])
@pytest.mark.parametrize("n", [2, 3, 6, 9, 19, 34])
def test_keyframes_last_n_minus_one_frame_periods(
    fast_body: Body, hub: EventHub, seen: list[Event], start: float, n: int
) -> None:
    engine, _, _ = make_engine(body=fast_body, events=hub, clock=FakeClock(start=start))
    engine.run(7)
    move = Keyframes(fast_body, ["arm"], [[100.0]] * n, frame_period=0.03)
    assert move.duration == pytest.approx((n - 1) * 0.03)
    assert move.frame_count == n
    engine.queue_move(move)
    engine.run(3 * n + 10)
    hub.drain()
    began, ended = _started(seen)[0].t, _finished(seen)[0].t
    # the move's t=0 is the tick before its first frame; it ends (N−1)·30 ms later, to the tick
    assert round((ended - began) / PERIOD) == 3 * (n - 1) - 1


def test_keyframes_pass_through_authored_values_at_their_times(
    fast_body: Body, hub: EventHub, seen: list[Event], frames: Frames
) -> None:
    engine, driver, _ = make_engine(body=fast_body, events=hub)
    arm, lid = fast_body.index("arm"), fast_body.index("eyelids")
    n = 12
    authored = np.array([[100.0 + 37.0 * (i % 5), 170.0 - 10.0 * i] for i in range(n)])
    authored[0] = fast_body.defaults()[[arm, lid]]  # starts where the body is: no blend
    engine.queue_move(Keyframes(fast_body, ["arm", "eyelids"], authored, frame_period=0.03))
    engine.run(3 * n + 5)
    hub.drain()
    x = frames(driver)
    t0 = _started(seen)[0].t - PERIOD  # the move's local time zero
    ts = np.array([f.t for f in driver.history()])
    for i in range(1, n):
        k = int(np.argmin(np.abs(ts - (t0 + 0.03 * i))))
        assert ts[k] == pytest.approx(t0 + 0.03 * i, abs=1e-9)
        np.testing.assert_allclose(x[k, [arm, lid]], authored[i], atol=1e-6)
        # between two authored frames the value is interpolated linearly
        mid = x[k - 1, [arm, lid]]
        np.testing.assert_allclose(
            mid, authored[i - 1] + (authored[i] - authored[i - 1]) * 2 / 3, atol=1e-6
        )
    # the last frame is held after the end
    np.testing.assert_allclose(x[-1, [arm, lid]], authored[-1])


def test_keyframes_reject_bad_data(fast_body: Body) -> None:
    with pytest.raises(InvalidCommandError, match="2-D"):
        Keyframes(fast_body, ["arm"], [])
    with pytest.raises(InvalidCommandError, match="values per frame"):
        Keyframes(fast_body, ["arm"], [[1.0, 2.0]])
    with pytest.raises(NonFiniteValueError):
        Keyframes(fast_body, ["arm"], [[1.0], [math.inf]])
    with pytest.raises(InvalidCommandError, match="frame_period"):
        Keyframes(fast_body, ["arm"], [[1.0]], frame_period=0.0)


def test_hold_keeps_its_channels_for_its_duration(
    fast_body: Body, hub: EventHub, seen: list[Event], frames: Frames
) -> None:
    engine, driver, _ = make_engine(body=fast_body, events=hub)
    arm = fast_body.index("arm")
    engine.queue_move(Goto(fast_body, {"arm": 300}, 0.1))
    engine.queue_move(Hold(fast_body, 0.25, channels=["arm"]))
    engine.queue_move(Goto(fast_body, {"arm": 100}, 0.1, name="back"))
    engine.run(60)
    hub.drain()
    assert [e.name for e in _started(seen)] == ["goto", "hold", "back"]
    hold_start = _started(seen)[1].t
    hold_end = _finished(seen)[1].t
    assert hold_end - (hold_start - PERIOD) == pytest.approx(0.25)
    x = frames(driver)[:, arm]
    k0, k1 = (round((t - 1000.0) / PERIOD) for t in (hold_start, hold_end))
    assert (x[k0 : k1 + 1] == 300.0).all()
    assert x[k1 + 1] < 300.0
    with pytest.raises(InvalidCommandError):
        Hold(fast_body, -1.0)
    assert Hold(fast_body, math.inf).duration == math.inf


def test_an_endless_hold_runs_until_cleared(
    fast_body: Body, hub: EventHub, seen: list[Event]
) -> None:
    engine, _, _ = make_engine(body=fast_body, events=hub)
    engine.queue_move(Hold(fast_body, math.inf))
    engine.queue_move(Goto(fast_body, {"arm": 5}, 0.1, name="after"))
    engine.run(500)
    assert engine.state().move == "hold"
    assert engine.state().queued == 1
    assert not engine.wait_until_idle(0)
    engine.clear()
    engine.run(30)
    hub.drain()
    assert engine.state().move is None
    assert engine.wait_until_idle(0)
    assert [e.name for e in _started(seen)] == ["hold"]
    assert {(e.name, e.reason) for e in _finished(seen) if e.cut} == {
        ("after", "cleared"),
        ("hold", "cleared"),
    }


def test_queued_moves_run_in_order_each_after_the_previous_ends(
    fast_body: Body, hub: EventHub, seen: list[Event]
) -> None:
    engine, _, _ = make_engine(body=fast_body, events=hub)
    for i, target in enumerate((200, 300, 150)):
        engine.queue_move(Goto(fast_body, {"arm": target}, 0.1 * (i + 1), name=f"m{i}"))
    assert engine.state().queued == 0  # commands are drained by the tick, not by the caller
    engine.run(1)
    assert engine.state().move == "m0"
    assert engine.state().queued == 2
    engine.run(100)
    hub.drain()
    moves = [e for e in seen if isinstance(e, MoveStarted | MoveFinished)]
    assert [(type(e).__name__, e.name) for e in moves] == [
        ("MoveStarted", "m0"),
        ("MoveFinished", "m0"),
        ("MoveStarted", "m1"),
        ("MoveFinished", "m1"),
        ("MoveStarted", "m2"),
        ("MoveFinished", "m2"),
    ]
    assert not any(e.cut for e in _finished(seen))
    # the next move starts on the tick right after the previous one's last
    for end, nxt in zip(_finished(seen), _started(seen)[1:], strict=False):
        assert nxt.t - end.t == pytest.approx(PERIOD)
    assert engine.wait_until_idle(0)


def test_play_now_preempts_and_drops_the_queue(
    fast_body: Body, hub: EventHub, seen: list[Event], frames: Frames
) -> None:
    engine, driver, _ = make_engine(body=fast_body, events=hub)
    engine.queue_move(Goto(fast_body, {"arm": 900}, 1.0, name="long"))
    engine.queue_move(Goto(fast_body, {"arm": 10}, 0.2, name="queued1"))
    engine.queue_move(Goto(fast_body, {"arm": 20}, 0.2, name="queued2"))
    engine.run(30)
    engine.play_now(Goto(fast_body, {"arm": 400}, 0.3, name="urgent"))
    engine.run(60)
    hub.drain()
    assert [e.name for e in _started(seen)] == ["long", "urgent"]
    cut = {(e.name, e.reason) for e in _finished(seen) if e.cut}
    assert cut == {("long", "preempted"), ("queued1", "preempted"), ("queued2", "preempted")}
    assert [e.name for e in _finished(seen) if not e.cut] == ["urgent"]
    x = frames(driver)[:, fast_body.index("arm")]
    assert x[-1] == pytest.approx(400.0)
    assert engine.state().queued == 0


def test_clear_decelerates_to_a_stop_without_a_jump(
    fast_body: Body, hub: EventHub, seen: list[Event], frames: Frames
) -> None:
    engine, driver, _ = make_engine(body=fast_body, events=hub)
    engine.queue_move(Goto(fast_body, {"arm": 600}, 1.0))
    engine.run(50)  # mid-move: the goto is at its fastest
    engine.clear()
    engine.run(40)
    hub.drain()
    x = frames(driver)[:, fast_body.index("arm")]
    v = np.diff(x)
    v_before = v[48]
    assert v_before > 5.0  # it was really moving
    after = v[49:]
    # velocity is continuous: the first step after clear is close to the last one before
    assert abs(after[0] - v_before) < 0.1 * v_before
    # it only slows down, never reverses, and stops within stop_s (+ one tick)
    assert (np.diff(after) <= 1e-9).all()
    assert (after >= -1e-9).all()
    stop_ticks = round(engine.config.stop_s / PERIOD) + 1
    assert (after[stop_ticks:] == 0.0).all()
    # it overshot the point of clearing by about v·T/2, and stopped short of the goto target
    assert x[-1] - x[49] == pytest.approx(v_before / PERIOD * engine.config.stop_s / 2, rel=0.1)
    assert x[-1] < 600.0
    assert [(e.name, e.cut, e.reason) for e in _finished(seen)] == [("goto", True, "cleared")]
    assert engine.wait_until_idle(0)


def test_clear_with_nothing_running_is_harmless(fast_body: Body, frames: Frames) -> None:
    engine, driver, _ = make_engine(body=fast_body)
    engine.clear()
    engine.run(5)
    assert (frames(driver) == fast_body.defaults()).all()
    assert engine.wait_until_idle(0)


class _PluginMove:
    """A plug-in's move (no ``finite`` attribute): its values are checked every tick."""

    name = "plugin"
    duration = 1.0

    def __init__(self, body: Body, bad: Callable[[float], FloatArray]) -> None:
        self.channels = body.indices(["arm"])
        self._bad = bad

    def begin(self, start: FloatArray) -> None:
        pass

    def evaluate(self, t: float) -> FloatArray:
        return self._bad(t) if t > 0.2 else np.array([300.0])


@pytest.mark.parametrize(
    "bad",
    [
        lambda t: np.array([math.nan]),
        lambda t: np.array([300.0, 1.0]),  # the wrong number of values
        lambda t: 1 / 0,  # raises
    ],
    ids=["nan", "shape", "raises"],
)
def test_a_broken_plugin_move_is_dropped_and_the_body_holds(
    fast_body: Body,
    hub: EventHub,
    seen: list[Event],
    frames: Frames,
    bad: Callable[[float], FloatArray],
) -> None:
    engine, driver, _ = make_engine(body=fast_body, events=hub)
    engine.queue_move(_PluginMove(fast_body, bad))  # type: ignore[arg-type]
    engine.run(60)
    hub.drain()
    assert [(e.name, e.reason) for e in _finished(seen)] == [("plugin", "failed")]
    assert engine.faults == 1
    x = frames(driver)[:, fast_body.index("arm")]
    assert np.isfinite(frames(driver)).all()
    assert x[-1] == x[-20]  # held where it was when the move broke


def test_keyframes_whose_steps_overflow_are_refused(fast_body: Body) -> None:
    # each value finite, their difference not: interpolating would give infinity
    with pytest.raises(NonFiniteValueError, match="differ by more than a float holds"):
        Keyframes(fast_body, ["arm"], [[1e308], [-1e308]], frame_period=0.1)
