"""The safety invariants on the Reachy Mini body, for any sequence of commands (hypothesis), as
``tests/motion/test_safety_property.py`` holds them for Nadine's: whatever is commanded — the
starter animations, extreme targets, huge gaze and sway offsets, antenna overrides, clears,
preemptions, estops — every frame the engine sends is finite, within the body's limits and one
tick's speed limit of the one before, and what the reachy_mini driver makes of it for the
daemon lies inside the daemon's own limits (measured against it: docs/reachy-mini.md), the
head within 65° of the body."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from anima.animation.library import AnimationLibrary, shipped_folder
from anima.body import load_body
from anima.drivers.base import Frame
from anima.drivers.reachy_mini import TWIST, ReachyMiniDriver, euler
from anima.errors import EStopActiveError
from anima.motion import Breathing, Goto, Keyframes
from anima.motion.engine import MotionEngine
from anima.testing import FakeClock
from anima.testing.reachy import EchoLink

pytestmark = pytest.mark.fast

BODY = load_body("reachy_mini")
NAMES = BODY.names
LIBRARY = AnimationLibrary([shipped_folder("reachy_mini")], len(BODY))
LIBRARY.load()
EPS = 1e-9
# the daemon's limits, measured on its mockup (1.13): roll, pitch (down +), yaw, body yaw in
# degrees; x, y, z in mm
DAEMON = {"roll": 51, "pitch": (-60, 50), "yaw": 180, "body": 160, "x": (-60, 52),
          "y": 54, "z": (-55, 24)}  # fmt: skip

value = st.one_of(st.floats(min_value=-100.0, max_value=400.0), st.floats(-1e9, 1e9))
channel = st.sampled_from(NAMES)
targets = st.dictionaries(channel, value, min_size=1, max_size=5)
angle = st.floats(min_value=-3.0, max_value=3.0)  # radians: far past every head limit
ticks = st.tuples(st.just("ticks"), st.integers(min_value=1, max_value=60))
command = st.one_of(
    ticks,
    ticks,
    st.tuples(st.just("animation"), st.sampled_from(LIBRARY.names())),
    st.tuples(st.just("goto"), targets, st.floats(min_value=0.0, max_value=1.0)),
    st.tuples(st.just("play_now"), targets, st.floats(min_value=0.0, max_value=0.5)),
    st.tuples(
        st.just("offset"),
        st.sampled_from(["gaze", "sway"]),
        st.tuples(angle, angle, angle),
        st.dictionaries(channel, value, max_size=3),
    ),
    st.tuples(st.just("clear_offset"), st.sampled_from(["gaze", "sway"])),
    st.tuples(
        st.just("antennas"),
        st.dictionaries(st.sampled_from(["antenna_right", "antenna_left"]), value, min_size=1),
    ),
    st.tuples(st.just("release")),
    st.tuples(st.just("clear")),
    st.tuples(st.just("estop")),
    st.tuples(st.just("reset")),
)


def _animation(name: str) -> Keyframes:
    anim = LIBRARY.get(name)
    chans = [BODY.channels[c - 1].name for c in anim.channels]
    return Keyframes(BODY, chans, anim.frames.tolist(), anim.frame_period, name=name)


def _apply(engine: MotionEngine, c: tuple[Any, ...]) -> None:
    kind = c[0]
    if kind == "ticks":
        engine.run(c[1])
    elif kind in ("animation", "goto", "play_now"):
        move = _animation(c[1]) if kind == "animation" else Goto(BODY, c[1], c[2])
        try:
            (engine.play_now if kind == "play_now" else engine.queue_move)(move)
        except EStopActiveError:
            assert engine.estopped
    elif kind == "offset":
        engine.set_offset(c[1], head=c[2], deltas=c[3])
    elif kind == "clear_offset":
        engine.clear_offset(c[1])
    elif kind == "antennas":
        engine.set_override("speech", c[1])
    elif kind == "release":
        engine.release_override("speech")
    elif kind == "clear":
        engine.clear()
    elif kind == "estop":
        engine.estop()
    else:
        engine.reset()


class Recorder:
    """The reachy_mini driver (its robot an echo), keeping each frame it returned and the
    target it would hand the daemon."""

    def __init__(self) -> None:
        self.driver = ReachyMiniDriver(BODY, lambda: EchoLink(0))
        self.frames: list[np.ndarray[Any, np.dtype[np.float64]]] = []
        self.is_connected = True

    def connect(self) -> None:
        self.driver.connect()

    def disconnect(self) -> None:
        self.driver.disconnect()

    def send(self, frame: Frame) -> Frame:
        sent = self.driver.send(frame)
        self.frames.append(sent.values)
        return sent


def _check_target(values: np.ndarray[Any, np.dtype[np.float64]]) -> None:
    target = TARGETS.target(values)  # what the driver hands the daemon for this frame
    roll, pitch, yaw = (math.degrees(a) for a in euler(target.head))
    x, y, z = (float(a) * 1000.0 for a in target.head[:3, 3])
    body = math.degrees(target.body_yaw)
    assert abs(roll) <= DAEMON["roll"] + EPS
    assert DAEMON["pitch"][0] - EPS <= pitch <= DAEMON["pitch"][1] + EPS
    assert abs(yaw) <= DAEMON["yaw"] + EPS
    assert abs(body) <= DAEMON["body"] + EPS
    assert abs(yaw - body) <= TWIST + 1e-6
    assert DAEMON["x"][0] <= x <= DAEMON["x"][1]
    assert abs(y) <= DAEMON["y"]
    assert DAEMON["z"][0] <= z <= DAEMON["z"][1]


TARGETS = ReachyMiniDriver(BODY, lambda: EchoLink(0))


@settings(
    max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow], database=None
)
@given(commands=st.lists(command, min_size=3, max_size=30))
def test_every_frame_sent_to_a_reachy_is_safe_whatever_is_commanded(
    commands: list[tuple[Any, ...]],
) -> None:
    recorder = Recorder()
    recorder.connect()
    try:
        engine = MotionEngine(BODY, recorder, clock=FakeClock(), idle=[Breathing(BODY)])
        for c in commands:
            _apply(engine, c)
        engine.reset()
        engine.clear()
        engine.run(60)
    finally:
        recorder.disconnect()
    lo, hi = BODY.lower(), BODY.upper()
    step = BODY.max_speeds() * engine.period
    prev = None
    for k, frame in enumerate(recorder.frames):
        assert np.isfinite(frame).all(), k
        assert (frame >= lo - EPS).all(), (k, frame)
        assert (frame <= hi + EPS).all(), (k, frame)
        if prev is not None:
            over = np.abs(frame - prev) - step
            assert (over <= 1e-6).all(), (k, NAMES[int(np.argmax(over))], float(over.max()))
        _check_target(frame)
        prev = frame
