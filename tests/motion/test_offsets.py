"""Secondary offsets: smoothed, slew-limited, head rotations composed in SO(3)."""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import pytest

from anima.body import Body, FloatArray
from anima.drivers.sim import SimDriver
from anima.errors import (
    InvalidCommandError,
    NonFiniteValueError,
    UnknownChannelError,
)
from anima.motion import Goto, so3
from anima.testing import make_engine

pytestmark = pytest.mark.fast

Frames = Callable[[SimDriver], FloatArray]
RAD = 0.01  # the fast body's head calibration: radians per unit, zero at 128


def _head_angles(body: Body, frame: FloatArray) -> tuple[float, float, float]:
    """(roll, pitch, yaw) in radians of a frame of the fast body."""
    return tuple(  # type: ignore[return-value]
        (frame[body.index(n)] - 128) * RAD for n in ("neck_roll", "neck_pitch", "neck_yaw")
    )


def test_a_25hz_staircase_becomes_smooth(fast_body: Body, frames: Frames) -> None:
    engine, driver, _ = make_engine(body=fast_body)
    yaw, eyes = fast_body.index("neck_yaw"), fast_body.index("eyes_yaw")
    stair = 0.0
    for k in range(300):
        if k % 4 == 0:  # a 25 Hz source tracking a 0.5 Hz sine
            stair = 0.3 * math.sin(2 * math.pi * 0.5 * k * 0.01)
            engine.set_offset("gaze", head=(0.0, 0.0, stair), deltas={"eyes_yaw": stair / RAD})
        engine.run(1)
    x = frames(driver)
    # the raw staircase jumps up to 0.3·π·0.04 rad = 3.8 units every fourth tick
    raw_jump = 0.3 * math.pi * 0.04 / RAD
    for i in (yaw, eyes):
        steps = np.abs(np.diff(x[:, i]))
        assert steps.max() < 0.35 * raw_jump
        assert steps.max() > 0.15 * raw_jump  # it does follow the input
    assert np.abs(x[:, yaw] - 128).max() > 25  # about the sine's 30-unit amplitude


def test_a_large_offset_step_is_slew_limited(fast_body: Body, frames: Frames) -> None:
    engine, driver, _ = make_engine(body=fast_body)
    yaw = fast_body.index("neck_yaw")
    engine.set_offset("look", head=(0.0, 0.0, 0.8))
    engine.run(200)
    x = frames(driver)[:, yaw]
    max_step = engine.config.offset_max_rate_rad_s * engine.period / RAD
    assert np.abs(np.diff(x)).max() <= max_step + 1e-9
    assert x[-1] == pytest.approx(128 + 0.8 / RAD)


def test_a_yaw_offset_on_a_pitched_head_changes_only_yaw(fast_body: Body, frames: Frames) -> None:
    engine, driver, _ = make_engine(body=fast_body)
    engine.queue_move(Goto(fast_body, {"neck_pitch": 128 + 0.3 / RAD}, 0.1))
    engine.run(20)
    engine.set_offset("gaze", head=(0.0, 0.0, 0.4))
    engine.run(300)
    roll, pitch, yaw = _head_angles(fast_body, frames(driver)[-1])
    # a world-frame yaw on Rz(0)·Ry(0.3): Rz(0.4)·Ry(0.3) — only yaw changes
    assert roll == pytest.approx(0.0, abs=1e-9)
    assert pitch == pytest.approx(0.3, abs=1e-9)
    assert yaw == pytest.approx(0.4, abs=1e-9)


def test_roll_and_pitch_offsets_compose_as_rotations_not_added_angles(
    fast_body: Body, frames: Frames
) -> None:
    engine, driver, _ = make_engine(body=fast_body)
    engine.queue_move(Goto(fast_body, {"neck_pitch": 128 + 0.3 / RAD}, 0.1))
    engine.run(20)
    offset = (0.3, 0.25, 0.0)
    engine.set_offset("tilt", head=offset)
    engine.run(300)
    got = _head_angles(fast_body, frames(driver)[-1])
    expected = so3.to_euler(so3.multiply(so3.from_euler(*offset), so3.from_euler(0.0, 0.3, 0.0)))
    np.testing.assert_allclose(got, expected, atol=1e-9)
    naive = (0.3, 0.55, 0.0)
    assert max(abs(g - n) for g, n in zip(got, naive, strict=True)) > 0.05


def test_offsets_from_several_sources_compose(fast_body: Body, frames: Frames) -> None:
    engine, driver, _ = make_engine(body=fast_body)
    engine.set_offset("a", head=(0.0, 0.2, 0.0), deltas={"arm": 10})
    engine.set_offset("b", head=(0.0, 0.0, 0.3), deltas={"arm": 5, "eyes_yaw": -7})
    engine.run(300)
    last = frames(driver)[-1]
    assert last[fast_body.index("arm")] == pytest.approx(115)
    assert last[fast_body.index("eyes_yaw")] == pytest.approx(121)
    expected = so3.to_euler(so3.multiply(so3.from_euler(0, 0.2, 0), so3.from_euler(0, 0, 0.3)))
    np.testing.assert_allclose(_head_angles(fast_body, last), expected, atol=1e-9)
    assert set(engine.state().offsets) == {"a", "b"}


def test_clear_offset_decays_smoothly_to_zero(fast_body: Body, frames: Frames) -> None:
    engine, driver, _ = make_engine(body=fast_body)
    yaw, arm = fast_body.index("neck_yaw"), fast_body.index("arm")
    engine.set_offset("gaze", head=(0.0, 0.0, 0.3), deltas={"arm": 40})
    engine.run(200)
    assert frames(driver)[-1, yaw] == pytest.approx(128 + 30)
    engine.clear_offset("gaze")
    engine.run(200)
    x = frames(driver)[199:]  # from the last frame before the clear
    for i, span in ((yaw, 30), (arm, 40)):
        steps = np.abs(np.diff(x[:, i]))
        assert steps.max() < 0.1 * span  # decays over many ticks, none of them a jump
        assert steps[0] > 0.0  # it starts at once
        assert (np.diff(x[:, i]) <= 1e-9).all()  # monotonically: critically damped
        assert x[-1, i] == fast_body.defaults()[i]  # and settles exactly at zero offset


def test_offsets_add_to_a_running_move(fast_body: Body, frames: Frames) -> None:
    engine, driver, _ = make_engine(body=fast_body)
    engine.set_offset("sway", deltas={"arm": 25})
    engine.run(100)
    engine.queue_move(Goto(fast_body, {"arm": 500}, 0.5))
    engine.run(100)
    x = frames(driver)[:, fast_body.index("arm")]
    assert x[-1] == pytest.approx(525.0)
    # the move started from the pose without the offset: no double counting, no step
    assert np.abs(np.diff(x[95:])).max() < 1.9 * 400 / 50


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
def test_non_finite_offsets_are_refused(fast_body: Body, frames: Frames, bad: float) -> None:
    engine, driver, _ = make_engine(body=fast_body)
    with pytest.raises(NonFiniteValueError):
        engine.set_offset("gaze", head=(0.0, bad, 0.0))
    with pytest.raises(NonFiniteValueError):
        engine.set_offset("gaze", deltas={"arm": bad})
    with pytest.raises(ValueError, match="not finite"):
        engine.set_offset("gaze", head=(bad, 0.0, 0.0))
    engine.run(10)
    assert engine.state().offsets == ()
    assert (frames(driver) == fast_body.defaults()).all()


def test_bad_offset_shapes_and_channels_are_refused(fast_body: Body) -> None:
    engine, _, _ = make_engine(body=fast_body)
    with pytest.raises(InvalidCommandError, match="roll, pitch, yaw"):
        engine.set_offset("gaze", head=(0.0, 0.1))  # type: ignore[arg-type]
    with pytest.raises(UnknownChannelError):
        engine.set_offset("gaze", deltas={"tail": 1.0})
