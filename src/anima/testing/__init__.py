"""Fakes and harnesses shipped with anima, so users can test their own code against them.

:class:`FakeTimeRobot` (the whole runtime on a fake clock) and :class:`ScriptedPlanner` are
imported on first use: the rest of this package does not load the runtime.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from anima.testing.clock import FakeClock
from anima.testing.events import EventRecorder
from anima.testing.harness import make_engine
from anima.testing.waiting import eventually

if TYPE_CHECKING:
    from anima.testing.fake_time import FakeTimeRobot
    from anima.testing.planner import ScriptedPlanner, reply

__all__ = [
    "EventRecorder",
    "FakeClock",
    "FakeTimeRobot",
    "ScriptedPlanner",
    "eventually",
    "make_engine",
    "reply",
]

_LAZY = {
    "FakeTimeRobot": "anima.testing.fake_time",
    "ScriptedPlanner": "anima.testing.planner",
    "reply": "anima.testing.planner",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'anima.testing' has no attribute {name!r}")
