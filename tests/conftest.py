"""Shared fixtures: a fast test body, an event hub with a recorder, the frames a sim was sent."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

from anima.body import Body, FloatArray, parse_body
from anima.drivers.sim import SimDriver
from anima.events import Event, EventHub

# A small body whose speed limits are effectively infinite, so the safety stage's step limiter
# cannot hide a discontinuity: any jump the motion layers make reaches the driver unchanged.
# Head channels are calibrated at 0.01 rad per unit around 128, with ranges wide enough that
# head-rotation tests never touch a limit.
FAST_BODY_INI = """\
[board]
channels = 9

[safety]
max_speed = 1000000

[channels]
1 = eyelids     170  40  225  role=eyelids closed=40
2 = eyes_yaw    128  0   255  role=eyes.yaw zero=128 rad=0.01
3 = lip_open    30   20  200  role=lips.open
4 = lip_wide    20   20  200  role=lips.wide
5 = lip_narrow  20   20  200  role=lips.narrow
6 = neck_yaw    128  0   255  role=neck.yaw zero=128 rad=0.01
7 = neck_pitch  128  0   255  role=neck.pitch zero=128 rad=0.01
8 = neck_roll   128  0   255  role=neck.roll zero=128 rad=0.01
9 = arm         100  0   1000
"""


@pytest.fixture
def fast_body() -> Body:
    return parse_body(FAST_BODY_INI, source="fast_body.ini")


@pytest.fixture
def hub() -> EventHub:
    """An event hub nobody starts: tests deliver with ``hub.drain()`` on their own thread."""
    return EventHub()


@pytest.fixture
def seen(hub: EventHub) -> list[Event]:
    """Every event published on ``hub``, appended when the test calls ``hub.drain()``."""
    events: list[Event] = []
    hub.subscribe(events.append)
    return events


def frames_of(driver: SimDriver) -> FloatArray:
    """Every frame in the driver's history as a (ticks × channels) array."""
    return np.array([f.values for f in driver.history()], dtype=np.float64)


@pytest.fixture
def frames() -> Callable[[SimDriver], FloatArray]:
    return frames_of
