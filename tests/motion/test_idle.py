"""Idle layers: breathing and blinking drive only free channels and take them back smoothly."""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import pytest

from anima.body import Body, FloatArray, load_body
from anima.config import BlinkConfig, BreathingConfig, MotionConfig
from anima.drivers.sim import SimDriver
from anima.errors import ConfigError
from anima.motion import Blink, Breathing, Goto, Hold
from anima.testing import make_engine

pytestmark = pytest.mark.fast

Frames = Callable[[SimDriver], FloatArray]
T0 = 1000.0


def _breathing(body: Body) -> Breathing:
    # 2 s period: sin(π·t) peaks at t = 1000.5 on the fake clock; 0.2 rad = 20 units here
    return Breathing(body, period_s=2.0, amplitude_rad=0.2)


def test_breathing_moves_the_neck_pitch_when_nothing_else_does(
    fast_body: Body, frames: Frames
) -> None:
    engine, driver, _ = make_engine(body=fast_body, idle=[_breathing(fast_body)])
    engine.run(300)
    x = frames(driver)
    ts = np.array([f.t for f in driver.history()])
    pitch = fast_body.index("neck_pitch")
    expected = 128 + 20 * np.sin(math.pi * ts)
    np.testing.assert_allclose(x[:, pitch], expected, atol=1e-6)
    # nothing else moves
    others = np.delete(x, pitch, axis=1)
    assert (others == np.delete(fast_body.defaults(), pitch)).all()


def test_the_default_idle_layers_come_from_config() -> None:
    engine, _, _ = make_engine(idle=None)
    assert sorted(layer.name for layer in engine.idle_layers) == ["blink", "breathing"]
    quiet = MotionConfig(breathing=BreathingConfig(enabled=False), blink=BlinkConfig(enabled=False))
    engine, driver, _ = make_engine(idle=None, config=quiet)
    assert engine.idle_layers == []
    engine.run(50)
    assert all((f.values == engine.body.defaults()).all() for f in driver.history())


def test_default_idle_life_on_the_shipped_body_stays_near_rest() -> None:
    engine, driver, _ = make_engine(idle=None)
    body = engine.body
    engine.run(1500)  # 15 s: several breaths and (with 2.5–6 s gaps) at least two blinks
    x = np.array([f.values for f in driver.history()])
    pitch, lids = body.index("neck_pitch"), body.index("eyelids")
    cal = body.channel("neck_pitch").calibration
    assert cal is not None
    amp = 0.015 / abs(cal.rad_per_unit)
    assert np.abs(x[:, pitch] - 128).max() == pytest.approx(amp, rel=0.05)
    closed = x[:, lids] <= body.channel("eyelids").min + 1.0
    blinks = int(np.count_nonzero(np.diff(closed.astype(int)) == 1))
    assert blinks >= 2
    assert closed.mean() < 0.1  # blinks are brief
    idle_channels = {pitch, lids}
    for i in range(len(body)):
        if i not in idle_channels:
            assert (x[:, i] == body.defaults()[i]).all(), body.names[i]


def test_idle_never_touches_a_channel_a_move_owns(fast_body: Body, frames: Frames) -> None:
    blink = Blink(fast_body, interval_s=(100.0, 100.0), close_s=0.05, hold_s=0.05, open_s=0.05)
    engine, driver, _ = make_engine(body=fast_body, idle=[_breathing(fast_body), blink])
    pitch, lids = fast_body.index("neck_pitch"), fast_body.index("eyelids")
    engine.run(1)
    engine.queue_move(Hold(fast_body, 1.0, channels=["neck_pitch", "eyelids"]))
    engine.run(10)
    blink.trigger()  # a blink is due, but the move owns the lids
    engine.run(60)
    x = frames(driver)
    held = x[1:70]
    assert (held[:, pitch] == held[0, pitch]).all()
    assert (held[:, lids] == held[0, lids]).all()


def test_idle_keeps_running_on_channels_the_move_does_not_own(
    fast_body: Body, frames: Frames
) -> None:
    blink = Blink(fast_body, interval_s=(100.0, 100.0), close_s=0.05, hold_s=0.05, open_s=0.05)
    engine, driver, _ = make_engine(body=fast_body, idle=[_breathing(fast_body), blink])
    pitch, lids = fast_body.index("neck_pitch"), fast_body.index("eyelids")
    engine.queue_move(Goto(fast_body, {"neck_yaw": 200, "arm": 500}, 1.0))
    engine.run(20)
    blink.trigger()
    engine.run(30)
    x = frames(driver)
    ts = np.array([f.t for f in driver.history()])
    np.testing.assert_allclose(x[:, pitch], 128 + 20 * np.sin(math.pi * ts), atol=1e-6)
    assert x[:, lids].min() == pytest.approx(40.0)  # the blink shut the lids fully
    assert x[-1, lids] == pytest.approx(170.0)  # and reopened them


def test_breathing_takes_the_neck_back_gradually_when_a_move_ends(
    fast_body: Body, frames: Frames
) -> None:
    engine, driver, _ = make_engine(body=fast_body, idle=[_breathing(fast_body)])
    pitch = fast_body.index("neck_pitch")
    # hold the neck at rest until t = 1000.5, when breathing is at its crest (+20 units)
    engine.queue_move(Hold(fast_body, 0.51, channels=["neck_pitch"]))
    engine.run(200)
    x = frames(driver)[:, pitch]
    ts = np.array([f.t for f in driver.history()])
    end = int(np.argmin(np.abs(ts - (T0 + 0.5))))
    # the move's last tick is already the hand-back's first
    assert (x[:end] == 128.0).all()
    target = 128 + 20 * np.sin(math.pi * ts)
    assert target[end] - x[end - 1] > 19.0  # handing back at once would jump this far
    steps = np.abs(np.diff(x))
    assert steps.max() < 2.5  # a 0.4 s min-jerk hand-back, plus breathing's own motion
    handback = round(engine.config.idle_handback_s / engine.period)
    # after the hand-back the neck follows breathing exactly again
    np.testing.assert_allclose(x[end + handback :], target[end + handback :], atol=1e-6)


def test_blink_takes_the_lids_back_gradually_when_a_move_ends(
    fast_body: Body, frames: Frames
) -> None:
    # a slow blink that is fully closed when the move lets go of the lids
    blink = Blink(fast_body, interval_s=(100.0, 100.0), close_s=0.1, hold_s=1.0, open_s=0.1)
    engine, driver, _ = make_engine(body=fast_body, idle=[blink])
    lids = fast_body.index("eyelids")
    engine.queue_move(Hold(fast_body, 0.5, channels=["eyelids"]))
    engine.run(20)
    blink.trigger()
    engine.run(100)
    x = frames(driver)[:, lids]
    assert (x[:49] == 170.0).all()  # the move holds the lids open meanwhile
    assert x[-1] == pytest.approx(40.0)  # then the blink, still shut, gets them
    steps = np.abs(np.diff(x))
    # 130 units handed back over 0.4 s of min-jerk: ≤ 1.875·130/40 ≈ 6.1 a tick, never 130
    assert steps.max() < 7.0


def test_idle_layers_validate_their_parameters(fast_body: Body) -> None:
    with pytest.raises(ConfigError):
        Breathing(fast_body, period_s=0.0)
    with pytest.raises(ConfigError):
        Breathing(fast_body, amplitude_rad=-0.1)
    with pytest.raises(ConfigError):
        Blink(fast_body, interval_s=(3.0, 1.0))
    with pytest.raises(ConfigError):
        Blink(fast_body, close_s=math.nan)


def test_idle_layers_do_nothing_on_a_body_without_the_roles(frames: Frames) -> None:
    body = load_body()
    bare = Body(channels=tuple(ch for ch in body.channels if ch.name.startswith(("r_", "l_"))))
    breathing, blink = Breathing(bare), Blink(bare, interval_s=(0.01, 0.02))
    assert breathing.channels.size == 0
    assert blink.channels.size == 0
    engine, driver, _ = make_engine(body=bare, idle=[breathing, blink])
    engine.run(50)
    assert (frames(driver) == bare.defaults()).all()
