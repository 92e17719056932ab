"""The safety invariants, for any sequence of commands (hypothesis).

Whatever is commanded — extreme targets, huge offsets, overrides fighting the lip rule, clears,
preemptions, estops — every frame the driver receives is in range, within one tick's speed
limit of the previous frame, and never has both lip-width channels active. Non-finite inputs
are refused at the API and never reach the driver.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from anima.body import Body, load_body
from anima.errors import EStopActiveError, NonFiniteValueError
from anima.events import EventHub, MoveFinished, MoveStarted
from anima.motion import Blink, Breathing, Goto, Hold, Keyframes, Move
from anima.motion.engine import MotionEngine
from anima.testing import make_engine

pytestmark = pytest.mark.fast

BODY = load_body()
NAMES = BODY.names
LIPS = ("lip_open", "lip_wide", "lip_narrow")
EPS = 1e-9

extreme = st.floats(min_value=-1e12, max_value=1e12, allow_nan=False)
# mostly plausible values with the odd extreme one, so the lip rule is really exercised
value = st.one_of(st.floats(min_value=-50.0, max_value=300.0), extreme)
angle = st.floats(min_value=-20.0, max_value=20.0)
duration = st.floats(min_value=0.0, max_value=1.0)
channel = st.sampled_from(NAMES)
targets = st.dictionaries(st.one_of(channel, st.sampled_from(LIPS)), value, min_size=1, max_size=6)
# mouth shapes on either side of the lip-width thresholds (47 on the shipped body)
lip_shape = st.dictionaries(
    st.sampled_from(LIPS), st.sampled_from([20.0, 40.0, 50.0, 120.0, 200.0]), min_size=1
)


@st.composite
def keyframes(draw: st.DrawFn) -> tuple[str, Any, Any, float]:
    chans = draw(
        st.lists(st.one_of(channel, st.sampled_from(LIPS)), min_size=1, max_size=4, unique=True)
    )
    n = draw(st.integers(min_value=1, max_value=8))
    frames = draw(
        st.lists(st.lists(value, min_size=len(chans), max_size=len(chans)), min_size=n, max_size=n)
    )
    period = draw(st.floats(min_value=0.005, max_value=0.1))
    return ("keyframes", chans, frames, period)


ticks = st.tuples(st.just("ticks"), st.integers(min_value=1, max_value=40))
command = st.one_of(
    ticks,
    ticks,  # listed three times: ticks between commands are what exercises the limits
    ticks,
    st.tuples(st.just("goto"), targets, duration),
    st.tuples(st.just("play_now"), targets, duration),
    keyframes(),
    st.tuples(st.just("hold"), st.one_of(duration, st.just(math.inf))),
    st.tuples(
        st.just("offset"),
        st.sampled_from(["gaze", "sway"]),
        st.tuples(angle, angle, angle),
        st.dictionaries(channel, value, max_size=4),
    ),
    st.tuples(st.just("clear_offset"), st.sampled_from(["gaze", "sway"])),
    st.tuples(
        st.just("override"), st.sampled_from(["lips", "other"]), st.one_of(targets, lip_shape)
    ),
    st.tuples(
        st.just("override_source"),
        st.lists(st.sampled_from(LIPS), min_size=1, max_size=3, unique=True),
        value,
        st.sampled_from(["steady", "wild", "nan", "raise"]),
    ),
    st.tuples(st.just("release"), st.sampled_from(["lips", "other", "speech"])),
    st.tuples(st.just("clear")),
    st.tuples(st.just("estop")),
    st.tuples(st.just("reset")),
)


def _source(kind: str, n: int, v: float) -> Any:
    def steady(_t: float) -> list[float]:
        return [v] * n

    def wild(t: float) -> list[float]:
        return [v * math.sin(40.0 * t + i) for i in range(n)]

    def nan(_t: float) -> list[float]:
        return [math.nan] * n

    def boom(_t: float) -> list[float]:
        raise RuntimeError("broken source")

    return {"steady": steady, "wild": wild, "nan": nan, "raise": boom}[kind]


def _move(engine: MotionEngine, cmd: tuple[Any, ...], name: str) -> Move:
    kind = cmd[0]
    if kind in ("goto", "play_now"):
        return Goto(engine.body, cmd[1], cmd[2], name=name)
    if kind == "keyframes":
        return Keyframes(engine.body, cmd[1], cmd[2], cmd[3], name=name)
    hold = Hold(engine.body, cmd[1])
    hold.name = name
    return hold


def _apply(engine: MotionEngine, cmd: tuple[Any, ...], i: int, accepted: list[str]) -> None:
    kind = cmd[0]
    if kind == "ticks":
        engine.run(cmd[1])
    elif kind in ("goto", "play_now", "keyframes", "hold"):
        move = _move(engine, cmd, f"m{i}")
        submit = engine.play_now if kind == "play_now" else engine.queue_move
        if engine.estopped:
            with pytest.raises(EStopActiveError):
                submit(move)
        else:
            submit(move)
            accepted.append(move.name)
    elif kind == "offset":
        engine.set_offset(cmd[1], head=cmd[2], deltas=cmd[3])
    elif kind == "clear_offset":
        engine.clear_offset(cmd[1])
    elif kind == "override":
        engine.set_override(cmd[1], cmd[2])
    elif kind == "override_source":
        engine.set_override_source("speech", cmd[1], _source(cmd[3], len(cmd[1]), cmd[2]))
    elif kind == "release":
        engine.release_override(cmd[1])
    elif kind == "clear":
        engine.clear()
    elif kind == "estop":
        engine.estop()
    elif kind == "reset":
        engine.reset()
    else:  # pragma: no cover - the strategy has no other kinds
        raise AssertionError(kind)


def _check_frames(body: Body, values: np.ndarray, period: float) -> None:
    lo, hi, step = body.lower(), body.upper(), body.max_speeds() * period
    rule = body.lip_rule
    assert rule is not None
    prev = body.defaults()
    for k, frame in enumerate(values):
        assert np.isfinite(frame).all(), k
        assert (frame >= lo).all(), (k, frame)
        assert (frame <= hi).all(), (k, frame)
        over = np.abs(frame - prev) - step
        assert (over <= EPS).all(), (k, body.names[int(np.argmax(over))], float(over.max()))
        assert not rule.violated(frame), (k, frame)
        prev = frame


@settings(
    max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow], database=None
)
@given(commands=st.lists(command, min_size=3, max_size=40))
def test_every_frame_sent_is_safe_whatever_is_commanded(commands: list[tuple[Any, ...]]) -> None:
    hub = EventHub()
    idle = [Breathing(BODY), Blink(BODY, interval_s=(0.2, 0.5), seed=7)]
    engine, driver, _ = make_engine(body=BODY, idle=idle, events=hub)
    accepted: list[str] = []
    for i, cmd in enumerate(commands):
        _apply(engine, cmd, i, accepted)
    # finish whatever is running, so the start/finish pairing can be checked too
    engine.reset()
    engine.clear()
    engine.run(60)

    values = np.array([f.values for f in driver.history()])
    assert len(values) == driver.sent
    _check_frames(BODY, values, engine.period)

    seen: list[Any] = []
    hub.subscribe(seen.append)
    hub.drain()
    started = Counter(e.name for e in seen if isinstance(e, MoveStarted))
    finished = Counter(e.name for e in seen if isinstance(e, MoveFinished))
    # every accepted move finished exactly once, started at most once, and only the ones that
    # were dropped before they began finished without starting (always as cut)
    assert finished == Counter(accepted), (accepted, finished)
    assert all(n == 1 for n in started.values()), started
    assert set(started) <= set(accepted)
    never_started = [e for e in seen if isinstance(e, MoveFinished) and e.name not in started]
    assert all(e.cut for e in never_started)


BAD = st.sampled_from([math.nan, math.inf, -math.inf])


@st.composite
def non_finite_command(draw: st.DrawFn) -> tuple[str, Any]:
    bad = draw(BAD)
    kind = draw(st.sampled_from(["goto", "keyframes", "head", "deltas", "override"]))
    chans = draw(st.lists(channel, min_size=1, max_size=4, unique=True))
    values = [draw(st.floats(min_value=0, max_value=255)) for _ in chans]
    values[draw(st.integers(min_value=0, max_value=len(chans) - 1))] = bad
    return kind, (chans, values, bad, draw(st.integers(min_value=0, max_value=2)))


@settings(max_examples=60, deadline=None, database=None)
@given(cmd=non_finite_command())
def test_non_finite_inputs_are_refused_and_never_reach_the_driver(cmd: tuple[str, Any]) -> None:
    engine, driver, _ = make_engine(body=BODY)
    kind, (chans, values, bad, axis) = cmd
    target = dict(zip(chans, values, strict=True))
    head = [0.1, 0.1, 0.1]
    head[axis] = bad
    calls: dict[str, Callable[[], object]] = {
        "goto": lambda: engine.queue_move(Goto(BODY, target, 0.5)),
        "keyframes": lambda: engine.queue_move(Keyframes(BODY, chans, [values, values])),
        "head": lambda: engine.set_offset("gaze", head=(head[0], head[1], head[2])),
        "deltas": lambda: engine.set_offset("gaze", deltas=target),
        "override": lambda: engine.set_override("lips", target),
    }
    with pytest.raises(NonFiniteValueError):
        calls[kind]()
    engine.run(20)
    values_sent = np.array([f.values for f in driver.history()])
    assert np.isfinite(values_sent).all()
    assert (values_sent == BODY.defaults()).all()
    assert engine.faults == 0


@pytest.mark.parametrize(
    ("first", "second"), [("lip_wide", "lip_narrow"), ("lip_narrow", "lip_wide")]
)
def test_switching_lip_width_sides_never_has_both_active(first: str, second: str) -> None:
    # The step limit drags the first side down while the second rises: without the second
    # check in the safety stage, both would be above their thresholds for a few ticks.
    engine, driver, _ = make_engine(body=BODY)
    engine.set_override("lips", {first: 200.0})
    engine.run(20)
    engine.set_override("lips", {first: 20.0, second: 200.0})
    engine.run(30)
    values = np.array([f.values for f in driver.history()])
    _check_frames(BODY, values, engine.period)
    assert values[-1, BODY.index(second)] == 200.0
    assert values[-1, BODY.index(first)] == 20.0
