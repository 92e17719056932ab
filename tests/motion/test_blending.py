"""Blending: no discontinuity when a move starts far away, is preempted or is cleared.

These run on a body whose speed limits are effectively infinite, so the safety stage's step
limiter cannot hide a jump: every per-tick change seen here is the motion layers' own.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

from anima.body import Body, FloatArray
from anima.drivers.sim import SimDriver
from anima.motion import Goto, Hold, Keyframes
from anima.testing import make_engine

pytestmark = pytest.mark.fast

Frames = Callable[[SimDriver], FloatArray]


def _max_step(x: FloatArray) -> float:
    return float(np.abs(np.diff(x, axis=0)).max())


def test_the_fast_body_does_not_limit_steps(fast_body: Body, frames: Frames) -> None:
    # the premise of this file: a jump commanded by an override reaches the driver in one tick
    engine, driver, _ = make_engine(body=fast_body)
    engine.run(2)
    engine.set_override("jump", {"arm": 900})
    engine.run(1)
    x = frames(driver)[:, fast_body.index("arm")]
    assert x[-1] - x[-2] == pytest.approx(800.0)


def test_keyframes_far_from_the_current_pose_blend_in(fast_body: Body, frames: Frames) -> None:
    engine, driver, _ = make_engine(body=fast_body)
    arm = fast_body.index("arm")
    engine.run(5)
    # authored to start 800 units away from where the arm is
    engine.queue_move(Keyframes(fast_body, ["arm"], [[900.0], [900.0], [880.0]], 0.03))
    engine.run(60)
    x = frames(driver)[:, arm]
    blend_ticks = round(engine.config.blend_s / engine.period)
    # a min-jerk blend of 800 units over blend_s peaks at 1.875·800/20 = 75 units a tick
    assert _max_step(x) < 1.9 * 800 / blend_ticks
    assert _max_step(x) > 0.5 * 800 / blend_ticks
    assert x[5] - x[4] < 5.0  # the first frame moves gently: no step at the start
    assert x[-1] == pytest.approx(880.0)  # and it still ends where it was authored to


def test_an_instant_goto_is_blended(fast_body: Body, frames: Frames) -> None:
    engine, driver, _ = make_engine(body=fast_body)
    engine.queue_move(Goto(fast_body, {"arm": 900, "neck_yaw": 0}, 0.0))
    engine.run(40)
    x = frames(driver)
    assert _max_step(x[:, fast_body.index("arm")]) < 1.9 * 800 / 20
    assert _max_step(x[:, fast_body.index("neck_yaw")]) < 1.9 * 128 / 20
    assert x[-1, fast_body.index("arm")] == pytest.approx(900.0)


@pytest.mark.parametrize("at_tick", [3, 25, 49, 80])
def test_preempting_a_move_makes_no_step(fast_body: Body, frames: Frames, at_tick: int) -> None:
    engine, driver, _ = make_engine(body=fast_body)
    arm = fast_body.index("arm")
    engine.queue_move(Goto(fast_body, {"arm": 900}, 1.0))
    engine.run(at_tick)
    # preempt with an animation authored somewhere else entirely
    engine.play_now(Keyframes(fast_body, ["arm"], [[0.0], [50.0], [10.0]], 0.03, name="other"))
    engine.run(60)
    x = frames(driver)[:, arm]
    # the goto alone moves at most 1.875·800/100 = 15 units a tick; a cut would jump by hundreds
    assert _max_step(x) < 1.9 * 900 / 20
    assert x[-1] == pytest.approx(10.0)


def test_preempting_with_a_goto_starts_from_where_the_body_is(
    fast_body: Body, frames: Frames
) -> None:
    engine, driver, _ = make_engine(body=fast_body)
    arm = fast_body.index("arm")
    engine.queue_move(Goto(fast_body, {"arm": 900}, 1.0))
    engine.run(50)
    engine.play_now(Goto(fast_body, {"arm": 100}, 0.5, name="back"))
    engine.run(80)
    x = frames(driver)[:, arm]
    steps = np.diff(x)
    assert float(np.abs(steps).max()) < 0.05 * 800
    assert abs(steps[49]) < 0.05 * 800  # the tick of the preemption
    assert x[-1] == pytest.approx(100.0)


@pytest.mark.parametrize("at_tick", [10, 50, 90])
def test_clearing_a_move_makes_no_step(fast_body: Body, frames: Frames, at_tick: int) -> None:
    engine, driver, _ = make_engine(body=fast_body)
    engine.queue_move(Goto(fast_body, {"arm": 900, "eyes_yaw": 250}, 1.0))
    engine.run(at_tick)
    engine.clear()
    engine.run(40)
    x = frames(driver)
    for name, span in (("arm", 800), ("eyes_yaw", 122)):
        series = x[:, fast_body.index(name)]
        assert _max_step(series) <= 1.9 * span / 100 + 1e-9, name
        assert series[-1] == series[-2] == series[-10], name  # stationary afterwards


def test_a_move_following_a_cleared_one_blends_from_the_held_pose(
    fast_body: Body, frames: Frames
) -> None:
    engine, driver, _ = make_engine(body=fast_body)
    engine.queue_move(Goto(fast_body, {"arm": 900}, 1.0))
    engine.run(50)
    engine.clear()
    engine.run(5)  # still decelerating
    engine.queue_move(Hold(fast_body, 0.2, channels=["arm"]))
    engine.run(40)
    x = frames(driver)[:, fast_body.index("arm")]
    assert _max_step(x) < 1.9 * 800 / 100
