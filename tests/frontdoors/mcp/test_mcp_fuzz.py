"""Tool arguments fuzzed from the tools' own schemas, and past them (hypothesis): every call is
answered (a result or a refusal with its reason, never an exception), the core goes on
answering, and no frame the driver was sent leaves the body's limits."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from anima.build import build
from anima.config import McpConfig
from anima.drivers.sim import SimDriver
from anima.frontdoors.mcp.robot import Cancel, McpRobot
from anima.frontdoors.mcp.tools import Tool
from anima.runtime import Runtime
from anima.testing.tts import ScriptedEngine

from .conftest import make_mcp, quiet_config

pytestmark = [
    pytest.mark.integration,
    # a named exception: hypothesis notes any change of the global random state while it draws,
    # and here a live server's threads run beside the draws (rich's import was one such caller,
    # now imported up front in tests/conftest.py; another, not yet found, fails a run now and then)
    pytest.mark.filterwarnings(
        "ignore:Do not use the `random` module inside strategies"
        ":hypothesis.errors.HypothesisDeprecationWarning"
    ),
]

JUNK = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**30), max_value=10**30),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=40),
    st.lists(st.integers(), max_size=3),
    st.dictionaries(st.text(max_size=5), st.integers(), max_size=2),
)


def from_schema(schema: Any, depth: int = 0) -> st.SearchStrategy[Any]:
    """Values a schema describes — and, one time in four, anything at all."""
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = kind[0]
    if "enum" in schema:
        good: st.SearchStrategy[Any] = st.sampled_from(schema["enum"])
    elif kind in ("number", "integer"):
        lo, hi = schema.get("minimum", -1e6), schema.get("maximum", 1e6)
        good = st.floats(min_value=lo, max_value=hi) if kind == "number" else st.integers(lo, hi)
    elif kind == "string":
        good = st.text(max_size=60)
    elif kind == "boolean":
        good = st.booleans()
    elif kind == "array" and depth < 3:
        items = schema.get("items", {})
        good = st.lists(from_schema(items, depth + 1), min_size=0, max_size=4)
    elif kind == "object" and depth < 3:
        props = schema.get("properties", {})
        required = schema.get("required", [])
        good = st.fixed_dictionaries(
            {k: from_schema(v, depth + 1) for k, v in props.items() if k in required},
            optional={k: from_schema(v, depth + 1) for k, v in props.items() if k not in required},
        )
    else:
        good = JUNK
    return st.one_of(good, good, good, JUNK)


@pytest.fixture(scope="module")
def rig() -> Iterator[tuple[Runtime, SimDriver, McpRobot]]:
    cfg = quiet_config()
    driver = SimDriver(history=100_000)
    runtime = build(cfg, driver=driver, tts=[ScriptedEngine()])
    runtime.start()
    mcp = make_mcp(runtime, McpConfig(rate_per_s=1000, burst=1000))  # the fuzz is no flood
    try:
        yield runtime, driver, mcp
    finally:
        mcp.stop()
        runtime.stop(ease=False)


def calls(tools: list[Tool]) -> st.SearchStrategy[tuple[str, Any]]:
    named = [st.tuples(st.just(t.name), from_schema(t.input_schema)) for t in tools]
    return st.one_of(*named, st.tuples(st.text(max_size=20), JUNK))


def test_fuzzed_arguments_are_answered_and_never_leave_the_limits(
    rig: tuple[Runtime, SimDriver, McpRobot],
) -> None:
    runtime, driver, mcp = rig
    answered = {"ok": 0, "refused": 0}

    @settings(
        max_examples=120,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    @given(call=calls(mcp.tools))
    # the draws are mostly refused (junk, or values hypothesis keeps simple: a look at the
    # origin): in 3 of 6 runs beside a busy machine none moved the body. These always run
    # first, so the limits below are checked on motion, the random calls' and theirs: a point
    # far past the head's range, and a gesture
    @example(call=("look_at", {"x": 0.3, "y": 4.0, "z": -3.0}))
    @example(call=("play_animation", {"name": "nod"}))
    def one(call: tuple[str, Any]) -> None:
        name, args = call
        cancelled = Cancel()
        timer = threading.Timer(0.3, cancelled.set)  # long plans are cut: the suite stays short
        timer.start()
        try:
            out = mcp.call(name, args if isinstance(args, dict) else {"value": args},
                           cancelled=cancelled)  # fmt: skip
        finally:
            timer.cancel()
        assert isinstance(out.text, str)
        assert out.text
        answered["refused" if out.error else "ok"] += 1
        if name == "emergency_stop":
            mcp.call("reset_emergency_stop")

    one()
    assert answered["ok"] > 0, answered
    assert answered["refused"] > 0, answered
    # still answering, and every frame sent stayed inside the body's limits
    still = mcp.call("wait", {"seconds": 0.01})
    assert not still.error, still.text
    frames = np.array([f.values for f in driver.history()])
    lo = np.array([c.min for c in runtime.body.channels])
    hi = np.array([c.max for c in runtime.body.channels])
    # how many frames depends on the machine's speed (94 in one run beside four busy workers,
    # hundreds alone); what matters is that the body moved, so the limits are checked on motion
    assert len(frames) > 0, answered
    assert float(np.ptp(frames, axis=0).max()) > 1.0, (len(frames), answered)
    assert np.all(frames >= lo - 1e-9)
    assert np.all(frames <= hi + 1e-9)
    assert runtime.engine.stats().ticks > 0
