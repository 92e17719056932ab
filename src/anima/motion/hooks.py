"""Tick hooks: code that must act on the tick's own time, run first in every tick.

A hook ``fn(t)`` runs on the motion thread at the start of each tick (after the estop check,
before the tick's commands are drained), so a move it queues starts in the same tick: what
annotated speech uses to start a gesture on the tick its word is first heard. A hook must be
quick and must not block; one that raises is removed and reported as a fault, and the loop goes
on. Hooks do not run while the emergency stop holds the robot.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

TickHook = Callable[[float], None]


class TickHooks:
    """The engine's hooks by name (set and removed from any thread)."""

    def __init__(self, fault: Callable[[str, str], None]) -> None:
        self._fault = fault
        self._lock = threading.Lock()
        self._hooks: dict[str, TickHook] = {}
        self._order: tuple[tuple[str, TickHook], ...] = ()  # what the tick reads, lock-free

    def set(self, name: str, fn: TickHook) -> None:
        with self._lock:
            self._hooks[name] = fn
            self._order = tuple(self._hooks.items())

    def remove(self, name: str) -> None:
        with self._lock:
            self._hooks.pop(name, None)
            self._order = tuple(self._hooks.items())

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(name for name, _ in self._order)

    def run(self, t: float) -> None:
        for name, fn in self._order:
            try:
                fn(t)
            except Exception as exc:  # a broken hook must not stop the loop: it goes
                self.remove(name)
                self._fault(f"hook:{name}", f"removed after it raised {exc!r}")
