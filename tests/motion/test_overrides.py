"""Overrides: a source owns channels outright; a faulty source is dropped, the loop goes on."""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import pytest

from anima.body import Body, FloatArray
from anima.drivers.sim import SimDriver
from anima.errors import NonFiniteValueError, UnknownChannelError
from anima.events import EngineFault, Event, EventHub
from anima.motion import Goto
from anima.testing import make_engine

pytestmark = pytest.mark.fast

Frames = Callable[[SimDriver], FloatArray]


def test_fixed_override_replaces_its_channels(fast_body: Body, frames: Frames) -> None:
    engine, driver, _ = make_engine(body=fast_body)
    lip, arm = fast_body.index("lip_open"), fast_body.index("arm")
    engine.queue_move(Goto(fast_body, {"lip_open": 150, "arm": 400}, 1.0))
    engine.set_offset("sway", deltas={"lip_open": 30})
    engine.run(10)
    engine.set_override("lips", {"lip_open": 90})
    engine.run(20)
    x = frames(driver)
    # whatever the move and the offset say, the override wins on its channel…
    assert (x[10:, lip] == 90.0).all()
    # …and only on its channel
    assert x[-1, arm] > x[10, arm]
    assert engine.state().overrides == ("lips",)
    engine.release_override("lips")
    engine.run(100)
    assert engine.state().overrides == ()
    assert frames(driver)[-1, lip] == pytest.approx(150 + 30)


def test_a_later_override_of_the_same_name_replaces_it(fast_body: Body, frames: Frames) -> None:
    engine, driver, _ = make_engine(body=fast_body)
    engine.set_override("lips", {"lip_open": 90, "lip_wide": 60})
    engine.run(2)
    engine.set_override("lips", {"lip_open": 40})
    engine.run(2)
    last = frames(driver)[-1]
    assert last[fast_body.index("lip_open")] == 40.0
    assert last[fast_body.index("lip_wide")] == fast_body.channel("lip_wide").default


def test_a_source_is_called_every_tick_with_the_tick_time(fast_body: Body, frames: Frames) -> None:
    engine, driver, _ = make_engine(body=fast_body)
    calls: list[float] = []

    def visemes(t: float) -> list[float]:
        calls.append(t)
        return [100.0 + 50.0 * math.sin(7.0 * t)]

    engine.set_override_source("speech", ["lip_open"], visemes)
    engine.run(50)
    ts = [f.t for f in driver.history()]
    assert calls == ts
    expected = 100.0 + 50.0 * np.sin(7.0 * np.array(ts))
    np.testing.assert_allclose(frames(driver)[:, fast_body.index("lip_open")], expected)


def test_a_source_returning_none_releases_itself(fast_body: Body, frames: Frames) -> None:
    engine, driver, _ = make_engine(body=fast_body)
    remaining = [3]

    def source(_t: float) -> list[float] | None:
        remaining[0] -= 1
        return [150.0] if remaining[0] >= 0 else None

    engine.set_override_source("once", ["lip_open"], source)
    engine.run(10)
    x = frames(driver)[:, fast_body.index("lip_open")]
    assert x[:3].tolist() == [150.0] * 3
    assert (x[3:] == fast_body.channel("lip_open").default).all()
    assert engine.state().overrides == ()
    assert engine.faults == 0


def _boom(_t: float) -> list[float]:
    raise RuntimeError("viseme table missing")


def _nan(_t: float) -> list[float]:
    return [math.nan]


def _short(_t: float) -> list[float]:
    return []


def _inf_tuple(_t: float) -> tuple[float]:
    return (math.inf,)


def _text(_t: float) -> list[str]:
    return ["wide"]


def _nested(_t: float) -> list[list[float]]:
    return [[1.0]]


@pytest.mark.parametrize(
    "source",
    [_boom, _nan, _short, _inf_tuple, _text, _nested],
    ids=["raises", "nan", "wrong-shape", "inf-tuple", "text", "nested"],
)
def test_a_faulty_source_is_dropped_with_an_event_and_the_loop_goes_on(
    fast_body: Body,
    hub: EventHub,
    seen: list[Event],
    frames: Frames,
    source: Callable[[float], list[float]],
) -> None:
    engine, driver, _ = make_engine(body=fast_body, events=hub)
    engine.set_override("steady", {"arm": 300})
    engine.set_override_source("speech", ["lip_open"], source)
    engine.run(20)
    hub.drain()
    faults = [e for e in seen if isinstance(e, EngineFault)]
    assert len(faults) == 1
    assert faults[0].source == "override:speech"
    assert faults[0].t == driver.history()[0].t
    assert engine.faults == 1
    assert engine.state().overrides == ("steady",)  # the healthy override stays
    assert driver.sent == 20  # every tick still sent a frame
    x = frames(driver)
    assert np.isfinite(x).all()
    assert (x[:, fast_body.index("lip_open")] == fast_body.channel("lip_open").default).all()
    assert (x[:, fast_body.index("arm")] == 300.0).all()


def test_override_arguments_are_checked_at_the_call(fast_body: Body) -> None:
    engine, _, _ = make_engine(body=fast_body)
    with pytest.raises(NonFiniteValueError):
        engine.set_override("lips", {"lip_open": math.inf})
    with pytest.raises(ValueError, match="not finite"):
        engine.set_override("lips", {"lip_open": math.nan})
    with pytest.raises(UnknownChannelError):
        engine.set_override("lips", {"jaw": 1.0})
    with pytest.raises(UnknownChannelError):
        engine.set_override_source("lips", ["jaw"], lambda _t: [1.0])
    with pytest.raises(TypeError):
        engine.set_override_source("lips", ["lip_open"], 5)  # type: ignore[arg-type]
    engine.run(3)
    assert engine.state().overrides == ()


def test_overrides_are_still_clamped_and_rate_limited() -> None:
    engine, driver, _ = make_engine()  # the real body: lip_open moves ≤ 25 units a tick
    body = engine.body
    lip = body.index("lip_open")
    engine.set_override("lips", {"lip_open": 1e9})
    engine.run(20)
    x = np.array([f.values[lip] for f in driver.history()])
    assert x.max() == body.channel("lip_open").max
    step = body.max_speeds()[lip] * engine.period
    assert np.abs(np.diff(np.concatenate(([body.defaults()[lip]], x)))).max() <= step + 1e-9


def test_a_source_of_plain_floats_is_written_as_given(fast_body: Body, frames: Frames) -> None:
    # a tuple of Python floats takes the path without an array; huge but finite values are
    # kept (their sum overflows, each is finite) and the safety stage clamps them
    engine, driver, _ = make_engine(body=fast_body)
    lips = fast_body.index("lip_open")
    engine.set_override_source("speech", ["lip_open"], lambda t: (1e308,))
    engine.run(50)
    assert engine.faults == 0
    assert frames(driver)[-1, lips] == fast_body.channel("lip_open").max
    engine.set_override_source(
        "speech", ["lip_open"], lambda t: [float(fast_body.channel("lip_open").min)]
    )
    engine.run(200)
    assert frames(driver)[-1, lips] == fast_body.channel("lip_open").min
