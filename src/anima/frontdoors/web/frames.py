"""Every commanded frame on the dashboard's WebSocket, for the clients that ask (``/ws?frames=1``).

The state message goes out at ``web.updates_hz`` (30): enough for a page, not for a recording of
a 100 Hz loop (``anima record`` recorded 30 frames a second). A client that connects with
``frames=1`` also gets, with each state message, a ``frames`` message carrying every frame the
driver was sent since the last one::

    {"v":1,"type":"frames","t":[1234.01,1234.02,…],"values":[[…],[…],…]}

``t`` is each frame's engine time (the tick's deadline), ``values`` its channel values. One
engine frame tap (:mod:`anima.motion.taps`) feeds every such client's bounded buffer, set while
at least one is connected; a client too slow to take them loses the oldest (``MAX_BUFFERED``).
"""

from __future__ import annotations

import collections
import threading
from typing import TYPE_CHECKING

from anima.drivers.base import Frame
from anima.wire import PAYLOAD_VERSION
from anima.wire.jsontypes import JsonObject

if TYPE_CHECKING:
    from anima.motion.engine import MotionEngine

TAP = "web-frames"
MAX_BUFFERED = 1000  # frames a client may fall behind (10 s of a 100 Hz loop)

Buffer = collections.deque[Frame]


class FrameFeed:
    """The engine tap and the buffers of the clients that asked for frames."""

    def __init__(self, engine: MotionEngine) -> None:
        self._engine = engine
        self._lock = threading.Lock()
        self._buffers: list[Buffer] = []
        self._fanout: tuple[Buffer, ...] = ()  # what the tap reads, lock-free

    def add(self) -> Buffer:
        buffer: Buffer = collections.deque(maxlen=MAX_BUFFERED)
        with self._lock:
            self._buffers.append(buffer)
            self._fanout = tuple(self._buffers)
            if len(self._buffers) == 1:
                self._engine.set_frame_tap(TAP, self._tap)
        return buffer

    def remove(self, buffer: Buffer) -> None:
        with self._lock:
            if buffer in self._buffers:
                self._buffers.remove(buffer)
            self._fanout = tuple(self._buffers)
            if not self._buffers:
                self._engine.remove_frame_tap(TAP)

    def _tap(self, frame: Frame) -> None:  # the motion thread: appends only
        for buffer in self._fanout:
            buffer.append(frame)


def frames_message(buffer: Buffer) -> JsonObject | None:
    """The frames ``buffer`` holds, taken out of it, as a ``frames`` message (None: none)."""
    ts: list[float] = []
    values: list[list[float]] = []
    while buffer:
        try:
            frame = buffer.popleft()
        except IndexError:
            break
        ts.append(round(frame.t, 6))
        values.append([round(float(v), 4) for v in frame.values])
    if not ts:
        return None
    return {"v": PAYLOAD_VERSION, "type": "frames", "t": ts, "values": values}
