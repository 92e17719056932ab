"""Fakes and harnesses shipped with anima, so users can test their own code against them."""

from anima.testing.clock import FakeClock
from anima.testing.harness import make_engine

__all__ = ["FakeClock", "make_engine"]
