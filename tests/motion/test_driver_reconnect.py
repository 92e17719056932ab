"""While the robot is away, the engine keeps the last frame it delivered as "last commanded",
so when the driver comes back motion ramps from where the servos stopped, within the limits."""

from __future__ import annotations

import numpy as np
import pytest

from anima.body import load_body
from anima.drivers.base import Frame
from anima.motion import Goto
from anima.motion.engine import MotionEngine
from anima.testing import FakeClock

pytestmark = pytest.mark.fast


class UnpluggableDriver:
    """A robot whose cable can be pulled: send() fails over to "not connected"."""

    def __init__(self) -> None:
        self.plugged = True
        self.delivered: list[Frame] = []

    @property
    def is_connected(self) -> bool:
        return self.plugged

    def connect(self) -> None:
        self.plugged = True

    def disconnect(self) -> None:
        self.plugged = False

    def send(self, frame: Frame) -> Frame:
        if self.plugged:
            self.delivered.append(frame)
        return frame


def test_motion_ramps_from_the_last_delivered_frame_after_a_reconnect() -> None:
    body = load_body()
    driver = UnpluggableDriver()
    engine = MotionEngine(body, driver, clock=FakeClock(), idle=())
    elbow = body.index("r_elbow")
    engine.queue_move(Goto(body, {"r_elbow": 210.0}, duration=2.0))
    engine.run(50)
    driver.plugged = False  # the cable is pulled mid-move
    stopped_at = driver.delivered[-1].values.copy()
    engine.run(300)  # the move finishes without the robot
    assert not engine.state().driver_connected
    np.testing.assert_allclose(engine.last_frame, stopped_at)
    driver.plugged = True
    engine.run(200)
    after = np.array([f.values for f in driver.delivered[-200:]])
    steps = np.abs(np.diff(np.vstack([stopped_at, after]), axis=0))
    limit = body.max_speeds() * engine.period + 1e-9
    assert (steps <= limit).all()  # no jump to where the move got to meanwhile
    assert after[0, elbow] - stopped_at[elbow] <= limit[elbow]
    assert after[-1, elbow] == 210.0  # and it does get there
