"""Step 7 of the tick: the frame goes to the driver, and what it sent becomes the last commanded.

A driver's ``send`` returns the frame it actually sent (after its own clamping or rounding):
that, not what the engine computed, is what the next tick's step limit ramps from. A driver
that is not connected is not called; one that raises is reported as a fault and the loop goes
on. While the driver is away the last commanded frame stays the last one the robot got, so the
step limit ramps from there when it comes back.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from anima.body import FloatArray
from anima.drivers.base import Driver, Frame


class DriverOutput:
    """Sends each tick's frame and keeps the engine's last commanded frame (written in place)."""

    def __init__(self, driver: Driver, last: FloatArray, fault: Callable[[str, str], None]) -> None:
        self._driver = driver
        self._last = last
        self._fault = fault
        self.connected = False  # the driver took the last frame and is still connected

    def send(self, t: float, values: FloatArray) -> Frame:
        frame = Frame(t, values.copy())
        driver = self._driver
        try:
            if driver.is_connected:
                frame = driver.send(frame)
                self.connected = driver.is_connected
            else:
                self.connected = False
        except Exception as exc:  # a driver failure must not stop the loop
            self.connected = False
            self._fault("driver", f"send failed: {exc!r}")
        if self.connected:
            np.copyto(self._last, frame.values)
        return frame
