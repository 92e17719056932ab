"""Animations as idle layers: a blink relative to where the lids are, a breath that loops."""

from __future__ import annotations

import numpy as np
import pytest

from anima.animation import Animation, AnimationLibrary, shipped_folder
from anima.animation.idle_layer import AnimationLayer
from anima.body import Body, FloatArray, load_body
from anima.config import BlinkConfig, MotionConfig
from anima.motion.minjerk import min_jerk
from anima.testing import make_engine

pytestmark = pytest.mark.fast

EYELIDS = 0  # 0-based index of channel1 in the shipped body
TORSO_PITCH = 11  # channel12, one of breathingSlow's channels
T0 = 1000.0


@pytest.fixture(scope="module")
def body() -> Body:
    return load_body()


@pytest.fixture(scope="module")
def library(body: Body) -> AnimationLibrary:
    lib = AnimationLibrary([shipped_folder()], len(body))
    assert not lib.load().errors
    return lib


def applied(layer: AnimationLayer, t: float, base: FloatArray) -> FloatArray:
    target = base.copy()
    layer.apply(t, base, target)
    return target


def raw_delta(anim: Animation, column: int, lt: float) -> float:
    """The animation's change from its first frame at local time ``lt`` (looping)."""
    frames = anim.frames[:, column]
    x = (lt / anim.frame_period) % anim.frame_count
    points = np.append(frames, frames[0])  # the loop runs from the last frame back to the first
    return float(np.interp(x, np.arange(len(points)), points) - frames[0])


# --------------------------------------------------------------------------- one-shot


def test_a_blink_closes_the_lids_from_where_they_are_and_ends(
    body: Body, library: AnimationLibrary
) -> None:
    blink = library.get("blink")
    layer = AnimationLayer(blink, body, loop=False)
    assert layer.name.endswith("blink")
    assert list(layer.channels) == [EYELIDS]
    base = body.defaults().copy()
    base[EYELIDS] = 200.0  # not the animation's 170: the layer is relative

    assert applied(layer, T0, base)[EYELIDS] == pytest.approx(200.0)
    # frame 3 (0.09 s) is the animation's 40, i.e. 130 below its first frame
    assert applied(layer, T0 + 0.09, base)[EYELIDS] == pytest.approx(70.0)
    lids = [applied(layer, T0 + k * 0.005, base)[EYELIDS] for k in range(48)]  # 0 … 0.235 s
    assert min(lids) == pytest.approx(200.0 - 130.0)
    assert all(v <= 200.0 + 1e-9 for v in lids)
    assert not layer.finished

    after = applied(layer, T0 + 0.25, base)  # past its 8 × 30 ms
    assert layer.finished
    np.testing.assert_array_equal(after, base)


def test_a_one_shot_layer_touches_only_its_channels(body: Body, library: AnimationLibrary) -> None:
    layer = AnimationLayer(library.get("blink"), body, loop=False)
    base = body.defaults()
    target = applied(layer, T0 + 0.1, base)
    others = np.arange(len(body)) != EYELIDS
    np.testing.assert_array_equal(target[others], base[others])


def test_stopping_a_one_shot_layer_ends_it_at_once(body: Body, library: AnimationLibrary) -> None:
    layer = AnimationLayer(library.get("blink"), body, loop=False)
    base = body.defaults()
    applied(layer, T0, base)
    layer.stop()
    target = applied(layer, T0 + 0.05, base)
    assert layer.finished
    np.testing.assert_array_equal(target, base)


# --------------------------------------------------------------------------- looping


def test_a_looping_layer_fades_in_wraps_around_and_never_ends_by_itself(
    body: Body, library: AnimationLibrary
) -> None:
    breath = library.get("breathingSlow")
    column = breath.channels.index(TORSO_PITCH + 1)
    layer = AnimationLayer(breath, body, loop=True, fade_s=0.5)
    assert sorted(int(i) for i in layer.channels) == [c - 1 for c in breath.channels]
    base = body.defaults().copy()
    base[TORSO_PITCH] = 140.0
    loop_s = breath.frame_count * breath.frame_period  # 160 frames: 4.8 s

    assert applied(layer, T0, base)[TORSO_PITCH] == pytest.approx(140.0)
    # fading in: at 0.3 s only min_jerk(0.3 / 0.5) of the animation's change
    full = raw_delta(breath, column, 0.3)
    assert full > 0
    fading = applied(layer, T0 + 0.3, base)[TORSO_PITCH] - 140.0
    assert fading == pytest.approx(full * min_jerk(0.6))
    assert 0 < fading < full
    # faded in: the whole change, and the same one a loop later
    for lt in (1.0, 2.5, 4.0):
        expected = 140.0 + raw_delta(breath, column, lt)
        assert applied(layer, T0 + lt, base)[TORSO_PITCH] == pytest.approx(expected)
        assert applied(layer, T0 + lt + loop_s, base)[TORSO_PITCH] == pytest.approx(expected)
        assert applied(layer, T0 + lt + 3 * loop_s, base)[TORSO_PITCH] == pytest.approx(expected)
    # the wrap itself is smooth: the last frame blends back into the first
    before_wrap = applied(layer, T0 + 2 * loop_s - 0.001, base)[TORSO_PITCH]
    after_wrap = applied(layer, T0 + 2 * loop_s + 0.001, base)[TORSO_PITCH]
    assert abs(after_wrap - before_wrap) < 0.1
    assert not layer.finished


def test_a_stopped_looping_layer_fades_out_then_finishes(
    body: Body, library: AnimationLibrary
) -> None:
    breath = library.get("breathingSlow")
    column = breath.channels.index(TORSO_PITCH + 1)
    layer = AnimationLayer(breath, body, loop=True, fade_s=0.5)
    base = body.defaults()
    rest = base[TORSO_PITCH]
    applied(layer, T0, base)
    applied(layer, T0 + 1.0, base)
    layer.stop()
    assert not layer.finished  # it fades out first
    at_stop = applied(layer, T0 + 1.0, base)[TORSO_PITCH] - rest
    assert at_stop == pytest.approx(raw_delta(breath, column, 1.0))
    halfway = applied(layer, T0 + 1.25, base)[TORSO_PITCH] - rest
    assert halfway == pytest.approx(raw_delta(breath, column, 1.25) * (1 - min_jerk(0.5)))
    assert not layer.finished
    end = applied(layer, T0 + 1.51, base)
    assert layer.finished
    np.testing.assert_allclose(end, base)


# --------------------------------------------------------------------------- on a real engine


def test_a_blink_layer_on_the_engine_dips_the_lids_and_goes_away(
    body: Body, library: AnimationLibrary
) -> None:
    # the configured idle life (breathing and random blinks), as the runtime runs it
    engine, driver, _clock = make_engine(idle=None)
    own = engine.idle_layer_names
    engine.run(5)
    layer = AnimationLayer(library.get("blink"), body, loop=False)
    engine.add_idle_layer(layer)
    lids: list[float] = []
    present: list[bool] = []
    for _ in range(40):  # 0.4 s; the random blink waits at least 2.5 s
        engine.run(1)
        lids.append(float(engine.last_frame[EYELIDS]))
        present.append(layer.name in engine.idle_layer_names)
    rest = body.defaults()[EYELIDS]
    assert min(lids) < rest - 100  # the animation goes from 170 down to 40
    assert lids[-1] == pytest.approx(rest, abs=0.5)
    assert present[0]
    assert not present[-1]
    # the engine's own layers are still there: the animation did not replace them
    assert engine.idle_layer_names == own
    assert driver.sent >= 45


def test_a_looping_layer_on_the_engine_runs_until_stopped(
    body: Body, library: AnimationLibrary
) -> None:
    engine, _driver, _clock = make_engine()
    layer = AnimationLayer(library.get("breathingSlow"), body, loop=True)
    engine.add_idle_layer(layer)
    torso: list[float] = []
    for _ in range(200):  # 2 s: faded in and rising
        engine.run(1)
        torso.append(float(engine.last_frame[TORSO_PITCH]))
    rest = body.defaults()[TORSO_PITCH]
    assert max(torso) > rest + 2
    assert layer.name in engine.idle_layer_names
    engine.stop_idle_layer(layer.name)
    engine.run(60)  # the 0.5 s fade-out, and a little more
    assert layer.name not in engine.idle_layer_names
    assert engine.last_frame[TORSO_PITCH] == pytest.approx(rest, abs=0.01)


def test_a_blink_layer_blinks_fully_without_the_random_blink_layer(
    body: Body, library: AnimationLibrary
) -> None:
    config = MotionConfig(blink=BlinkConfig(enabled=False))
    engine, _driver, _clock = make_engine(config=config, idle=None)
    assert engine.idle_layer_names == ("breathing",)
    engine.run(5)
    engine.add_idle_layer(AnimationLayer(library.get("blink"), body, loop=False))
    lids: list[float] = []
    for _ in range(40):
        engine.run(1)
        lids.append(float(engine.last_frame[EYELIDS]))
    # the eyelids were no idle layer's before: the blink must still act at once, not fade in
    assert min(lids) < body.defaults()[EYELIDS] - 100
