"""Frame taps: every frame the driver sent, estop included; a broken tap is removed."""

from __future__ import annotations

import numpy as np
import pytest

from anima.drivers.base import Frame
from anima.events import EngineFault, EventHub
from anima.testing import EventRecorder, make_engine

pytestmark = pytest.mark.fast


def test_a_tap_sees_every_sent_frame_and_a_broken_one_goes() -> None:
    hub = EventHub()
    seen = EventRecorder().attach(hub)
    engine, driver, _ = make_engine(events=hub)
    frames: list[Frame] = []
    engine.set_frame_tap("test", frames.append)

    def broken(_frame: Frame) -> None:
        raise RuntimeError("no")

    engine.set_frame_tap("broken", broken)
    engine.run(10)
    engine.estop()
    engine.run(5)  # held frames are sent, and seen
    engine.remove_frame_tap("test")
    engine.run(5)
    hub.drain()
    assert len(frames) == 15
    ts = [f.t for f in frames]
    assert np.allclose(np.diff(ts), engine.period)
    sent = driver.history()
    assert [f.t for f in sent[:15]] == ts
    assert all(np.array_equal(a.values, b.values) for a, b in zip(frames, sent, strict=False))
    faults = [e for e in seen.of(EngineFault) if isinstance(e, EngineFault)]
    assert [f.source for f in faults] == ["tap:broken"]
