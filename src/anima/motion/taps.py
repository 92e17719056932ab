"""Frame taps: code that sees every frame the driver sent, on the motion thread, after step 7.

A tap ``fn(frame)`` gets each tick's :class:`~anima.drivers.base.Frame` as the driver returned
it (every tick, estop included): what a recording at the loop's own rate needs (``anima record``
takes the dashboard's 30 Hz state otherwise). A tap must be quick and must not block (hand the
frame to a queue); one that raises is removed and reported as a fault. With no tap the tick
calls the driver output directly: a tap costs nothing until one is set.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from anima.body import FloatArray
from anima.drivers.base import Frame

FrameTap = Callable[[Frame], None]
Send = Callable[[float, FloatArray], Frame]


class FrameTaps:
    """The engine's taps by name (set and removed from any thread); :meth:`send` is the tick's
    step 7, rebound whenever the set of taps changes."""

    def __init__(self, send: Send, fault: Callable[[str, str], None]) -> None:
        self._plain = send
        self._fault = fault
        self._lock = threading.Lock()
        self._taps: dict[str, FrameTap] = {}
        self.send: Send = send  # what the tick calls (an attribute read: swapped atomically)

    def set(self, name: str, fn: FrameTap) -> None:
        with self._lock:
            self._taps[name] = fn
            self._rebind()

    def remove(self, name: str) -> None:
        with self._lock:
            self._taps.pop(name, None)
            self._rebind()

    @property
    def names(self) -> tuple[str, ...]:
        with self._lock:
            return tuple(self._taps)

    def _rebind(self) -> None:
        taps = tuple(self._taps.items())
        if not taps:
            self.send = self._plain
            return
        plain = self._plain

        def tapped(t: float, values: FloatArray) -> Frame:
            frame = plain(t, values)
            for name, fn in taps:
                try:
                    fn(frame)
                except Exception as exc:  # a broken tap must not stop the loop: it goes
                    self.remove(name)
                    self._fault(f"tap:{name}", f"removed after it raised {exc!r}")
            return frame

        self.send = tapped
