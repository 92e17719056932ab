"""Build an engine on the simulated robot with a fake clock in one call."""

from __future__ import annotations

from collections.abc import Sequence

from anima.body import Body, load_body
from anima.config import MotionConfig
from anima.drivers.sim import SimDriver
from anima.events import EventHub
from anima.motion.engine import MotionEngine
from anima.motion.idle import IdleLayer
from anima.testing.clock import FakeClock


def make_engine(
    *,
    body: Body | None = None,
    config: MotionConfig | None = None,
    idle: Sequence[IdleLayer] | None = (),
    clock: FakeClock | None = None,
    events: EventHub | None = None,
    history: int = 100_000,
) -> tuple[MotionEngine, SimDriver, FakeClock]:
    """An engine on a connected :class:`SimDriver` and a :class:`FakeClock`.

    Idle layers are off by default (``idle=()``) so tests see only what they command; pass
    ``idle=None`` for the configured defaults (breathing and blink).
    """
    body = body or load_body()
    clock = clock or FakeClock()
    driver = SimDriver(history=history)
    driver.connect()
    engine = MotionEngine(body, driver, clock=clock, config=config, events=events, idle=idle)
    return engine, driver, clock
