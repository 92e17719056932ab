"""An event recorder for tests: every event a hub (or a robot's port) publishes, kept in order,
with waits that wake on each new event instead of polling.

::

    recorder = EventRecorder().attach(runtime.events)
    runtime.execute(cmd.PlayAnimation(name="nod"))
    done = recorder.wait_for(MoveFinished, timeout=5)      # a type, a kind, or a predicate
    recorder.none_for("command_rejected", seconds=0.2)     # and nothing of this came
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any, Protocol, TypeVar, overload

from anima.events import Event

Match = type[Event] | str | Callable[[Event], bool]
E = TypeVar("E", bound=Event)


class _Hub(Protocol):
    def subscribe(self, handler: Callable[[Event], None], *kinds: str) -> Callable[[], None]: ...


def matcher(match: Match) -> Callable[[Event], bool]:
    if isinstance(match, str):
        return lambda e: e.kind == match
    if isinstance(match, type):
        kind = match
        return lambda e: isinstance(e, kind)
    return match


class EventRecorder:
    """Records events as they are delivered (call it, or :meth:`attach` it to a hub)."""

    def __init__(self) -> None:
        self._events: list[Event] = []
        self._cond = threading.Condition()
        self._detach: Callable[[], None] | None = None

    def attach(self, hub: _Hub, *kinds: str) -> EventRecorder:
        """Subscribe to ``hub`` (to ``kinds`` only, when given); returns the recorder."""
        self._detach = hub.subscribe(self, *kinds)
        return self

    def detach(self) -> None:
        if self._detach is not None:
            self._detach()
            self._detach = None

    def __call__(self, event: Event) -> None:
        with self._cond:
            self._events.append(event)
            self._cond.notify_all()

    @property
    def events(self) -> list[Event]:
        """Everything recorded so far, oldest first (a copy)."""
        with self._cond:
            return list(self._events)

    def mark(self) -> int:
        """A position: :meth:`wait_for` and :meth:`of` look only at what came after it."""
        with self._cond:
            return len(self._events)

    @overload
    def of(self, match: type[E], *, since: int = 0) -> list[E]: ...
    @overload
    def of(self, match: Match, *, since: int = 0) -> list[Event]: ...
    def of(self, match: Match, *, since: int = 0) -> list[Any]:
        """The events recorded that match (a type — then typed as it —, a kind, or a
        predicate)."""
        test = matcher(match)
        with self._cond:
            return [e for e in self._events[since:] if test(e)]

    @overload
    def wait_for(
        self, match: type[E], timeout: float = 5.0, *, since: int = 0, count: int = 1
    ) -> E: ...
    @overload
    def wait_for(
        self, match: Match, timeout: float = 5.0, *, since: int = 0, count: int = 1
    ) -> Event: ...
    def wait_for(
        self, match: Match, timeout: float = 5.0, *, since: int = 0, count: int = 1
    ) -> Event:
        """The ``count``-th matching event after ``since`` (the first by default), waiting up
        to ``timeout`` seconds for it; AssertionError naming the kinds that did come."""
        test = matcher(match)
        with self._cond:
            seen = since
            found: list[Event] = []

            def ready() -> bool:
                nonlocal seen
                for event in self._events[seen:]:
                    if test(event):
                        found.append(event)
                seen = len(self._events)
                return len(found) >= count

            if not self._cond.wait_for(ready, timeout):
                kinds = sorted({e.kind for e in self._events[since:]})
                raise AssertionError(
                    f"no matching event within {timeout:g} s (came: {', '.join(kinds) or 'none'})"
                )
            return found[count - 1]

    def none_for(self, match: Match, seconds: float, *, since: int | None = None) -> None:
        """Assert that no matching event comes (after ``since``, default now) for ``seconds``:
        a real wait, for what must not happen."""
        start = self.mark() if since is None else since
        end = time.monotonic() + seconds
        test = matcher(match)
        with self._cond:
            while True:
                hit = next((e for e in self._events[start:] if test(e)), None)
                if hit is not None:
                    raise AssertionError(f"an event that must not come came: {hit!r}")
                left = end - time.monotonic()
                if left <= 0:
                    return
                self._cond.wait(left)
