"""Fakes and harnesses shipped with anima, so users can test their own code against them."""

from anima.testing.clock import FakeClock
from anima.testing.events import EventRecorder
from anima.testing.harness import make_engine
from anima.testing.waiting import eventually

__all__ = ["EventRecorder", "FakeClock", "eventually", "make_engine"]
