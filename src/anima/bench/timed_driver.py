"""A simulated driver that notes when each frame arrived, for the MQTT benchmarks."""

from __future__ import annotations

import collections
import threading
import time

import numpy as np

from anima.body import FloatArray
from anima.drivers.base import Frame
from anima.drivers.sim import SimDriver


class TimedDriver:
    """A sim driver that also notes when each frame arrived (``time.monotonic()``)."""

    def __init__(self, capacity: int) -> None:
        self.sim = SimDriver(history=1)
        self._lock = threading.Lock()
        self._times: collections.deque[float] = collections.deque(maxlen=capacity)
        self._frames: collections.deque[FloatArray] = collections.deque(maxlen=capacity)

    @property
    def is_connected(self) -> bool:
        return self.sim.is_connected

    def connect(self) -> None:
        self.sim.connect()

    def disconnect(self) -> None:
        self.sim.disconnect()

    def send(self, frame: Frame) -> Frame:
        sent = self.sim.send(frame)
        with self._lock:
            self._times.append(time.monotonic())
            self._frames.append(sent.values)
        return sent

    def since(self, t: float, channel: int) -> tuple[FloatArray, FloatArray]:
        """(arrival times, values of ``channel``) of the frames that arrived after ``t``."""
        times: list[float] = []
        values: list[float] = []
        with self._lock:
            for when, frame in zip(reversed(self._times), reversed(self._frames), strict=True):
                if when <= t:
                    break
                times.append(when)
                values.append(float(frame[channel]))
        return np.array(times[::-1]), np.array(values[::-1])
