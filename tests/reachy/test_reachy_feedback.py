"""Commanded against measured: a reading matched to what was sent (its lag, its deviation), the
Reachy driver's readings in the body's units, and the state's ``measured`` part on every door."""

from __future__ import annotations

import math
import time

import numpy as np
import pytest

from anima.body import load_body
from anima.build import build
from anima.config import AnimaConfig, MqttConfig, SpeechConfig, WebConfig
from anima.drivers.base import Frame
from anima.drivers.feedback import SentHistory, measured_state
from anima.drivers.reachy_mini import Measured, ReachyMiniDriver
from anima.testing import eventually
from anima.testing.reachy import EchoLink
from anima.wire.state import RuntimeState

pytestmark = pytest.mark.integration

NAMES = ("a", "b", "c")


def ramp(history: SentHistory, n: int = 50, step: float = 0.5) -> None:
    """Channel b rises by ``step`` every 20 ms from t = 0; a and c stand still."""
    for i in range(n):
        history.add(i * 0.02, np.array([10.0, 100.0 + i * step, 5.0]))


def test_a_reading_lags_by_the_age_of_the_frame_it_matches() -> None:
    history = SentHistory(NAMES)
    ramp(history)  # sent up to t = 0.98
    reading = np.array([10.0, 100.0 + 45 * 0.5, math.nan])  # the frame sent at t = 0.90
    match = history.match(1.0, reading)
    assert match.lag_s == pytest.approx(0.10)
    assert match.deviation == pytest.approx(0.0)
    fb = history.feedback(1.0, reading, match)
    assert fb.lag_s == pytest.approx(0.10)


def test_frames_sent_after_the_reading_are_not_matched() -> None:
    history = SentHistory(NAMES)
    ramp(history)
    reading = np.array([10.0, 100.0 + 45 * 0.5, 5.0])
    match = history.match(0.5, reading)  # taken at 0.5 s: only frames 0…25 count
    assert match.lag_s is None  # ahead of all it could have been sent: no lag
    assert match.deviation == pytest.approx(10.0)  # 45·0.5 − 25·0.5
    assert NAMES[match.worst] == "b"


def test_a_still_robot_has_no_lag_and_a_stuck_one_a_deviation() -> None:
    history = SentHistory(NAMES)
    for i in range(50):
        history.add(i * 0.02, np.array([10.0, 100.0, 5.0]))
    still = history.match(1.0, np.array([10.0, 100.0, 5.0]))
    assert still.lag_s is None
    assert still.deviation == 0.0
    stuck = history.match(1.0, np.array([10.0, 100.0, 12.0]))
    assert stuck.lag_s is None  # matches no frame
    assert stuck.deviation == pytest.approx(7.0)
    assert NAMES[stuck.worst] == "c"
    history.clear()
    ramp(history)
    stuck = history.match(1.0, np.array([10.0, 100.0 + 45 * 0.5, 40.0]))
    assert stuck.lag_s is None
    assert NAMES[stuck.worst] == "c"


def test_the_lag_reported_is_the_median_of_the_recent_moves() -> None:
    history = SentHistory(NAMES, lags_kept=5)
    ramp(history)
    history.samples = []
    for back in (2, 2, 3, 9, 2):  # one slow reading
        history.match(1.0, np.array([10.0, 100.0 + (50 - back) * 0.5, 5.0]))
    assert history.recent_lag() == pytest.approx(1.0 - 48 * 0.02)  # 2 frames back: 0.04 s
    assert len(history.samples) == 5
    assert history.match(1.0, np.array([math.nan] * 3)).worst == -1  # nothing measured


def test_a_reading_before_anything_was_sent_matches_nothing() -> None:
    match = SentHistory(NAMES).match(1.0, np.array([1.0, 2.0, 3.0]))
    assert match.lag_s is None
    assert match.worst == -1


def test_the_driver_reads_back_in_the_bodys_units() -> None:
    body = load_body("reachy_mini")
    driver = ReachyMiniDriver(body, lambda: EchoLink(0))
    values = np.array([c.default for c in body.channels], dtype=float)
    for name, v in {"head_x": 140, "head_z": 110, "head_roll": 140, "head_pitch": 100,
                    "head_yaw": 170, "antenna_left": 60, "body_yaw": 90}.items():  # fmt: skip
        values[body.index(name)] = v
    t = driver.target(values)
    back = driver.values(Measured(0.0, t.head, t.antennas, t.body_yaw))
    assert np.allclose(back, values, atol=1e-6)
    back = driver.values(Measured(0.0, t.head, t.antennas))  # a link without the body's yaw
    assert math.isnan(back[body.index("body_yaw")])


def test_a_lagging_robot_is_measured_lagging() -> None:
    body = load_body("reachy_mini")
    link = EchoLink(behind=5)  # 5 targets at 50 Hz: 100 ms
    driver = ReachyMiniDriver(body, lambda: link)
    driver.connect()
    try:
        yaw = body.index("head_yaw")
        values = np.array([c.default for c in body.channels], dtype=float)
        for i in range(150):  # 1.5 s of a yaw sweep, sent at the loop's 100 Hz
            values[yaw] = 128 + 30 * math.sin(i / 20)
            driver.send(Frame(i * 0.01, values.copy()))
            time.sleep(0.01)
        assert eventually(lambda: driver.feedback() is not None, timeout=5)
        fb = driver.feedback()
        assert fb is not None
        assert fb.lag_s is not None
        assert 0.05 < fb.lag_s < 1.0  # 5 sends behind: about 0.1 s, however the host runs
        assert fb.worst
    finally:
        driver.disconnect()


def test_the_state_carries_what_the_driver_measured() -> None:
    body = load_body("reachy_mini")
    link = EchoLink(behind=0)
    driver = ReachyMiniDriver(body, lambda: link)
    config = AnimaConfig(
        mqtt=MqttConfig(enabled=False), web=WebConfig(enabled=False),
        speech=SpeechConfig(enabled=False),
    )  # fmt: skip
    runtime = build(config, body=body, driver=driver)
    with runtime:
        assert eventually(lambda: runtime.state().measured is not None, timeout=5)
        state = runtime.state()
        assert state.measured is not None
        assert len(state.measured.values) == len(body.channels)
        assert state.measured.values[body.index("head_yaw")] == pytest.approx(128, abs=1)
        assert state.measured.age_ms < 5000
        again = RuntimeState.from_json(state.to_json())
        assert again.measured is not None
        assert again.measured.values[body.index("body_yaw")] == pytest.approx(128, abs=1)


def test_a_driver_that_measures_nothing_has_no_measured_part() -> None:
    runtime = build(AnimaConfig(mqtt=MqttConfig(enabled=False), web=WebConfig(enabled=False)))
    assert measured_state(runtime.driver) is None
    assert runtime.state().to_json()["measured"] is None
    assert RuntimeState.from_json(runtime.state().to_json()).measured is None
