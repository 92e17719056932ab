"""The simulated robot: accepts every frame, remembers recent ones, can record them all.

Recording writes JSON Lines (one ``{"t": seconds, "values": [...]}`` per frame) from a writer
thread the driver owns, so the engine's tick never waits on a disk.
"""

from __future__ import annotations

import collections
import json
import logging
import queue
import threading
from pathlib import Path
from typing import IO

from anima.drivers.base import Frame
from anima.errors import DriverError, NotConnectedError

log = logging.getLogger(__name__)


class SimDriver:
    """A robot that is only its last frame, a bounded history, and optionally a recording."""

    def __init__(self, *, history: int = 1000, record: str | Path | None = None) -> None:
        if history < 1:
            raise ValueError(f"history must be ≥ 1, got {history}")
        self._history: collections.deque[Frame] = collections.deque(maxlen=history)
        self._record_path = Path(record) if record is not None else None
        self._connected = False
        self._last: Frame | None = None
        self._sent = 0
        self._queue: queue.SimpleQueue[Frame | None] = queue.SimpleQueue()
        self._writer: threading.Thread | None = None
        self._file: IO[str] | None = None

    @property
    def is_connected(self) -> bool:
        return self._connected

    def connect(self) -> None:
        if self._connected:
            return
        if self._record_path is not None:
            try:
                self._record_path.parent.mkdir(parents=True, exist_ok=True)
                self._file = self._record_path.open("w", encoding="utf-8")
            except OSError as exc:
                raise DriverError(f"sim: cannot open recording {self._record_path}: {exc}") from exc
            self._writer = threading.Thread(
                target=self._write, name="anima-sim-record", daemon=True
            )
            self._writer.start()
        self._connected = True

    def disconnect(self) -> None:
        if not self._connected:
            return
        self._connected = False
        if self._writer is not None:
            self._queue.put(None)
            self._writer.join(5.0)
            self._writer = None
        if self._file is not None:
            self._file.close()
            self._file = None

    def send(self, frame: Frame) -> Frame:
        if not self._connected:
            raise NotConnectedError("sim: send() before connect()")
        self._last = frame
        self._history.append(frame)
        self._sent += 1
        if self._writer is not None:
            self._queue.put(frame)
        return frame

    # --- what tests and tools look at -------------------------------------------------------
    @property
    def last(self) -> Frame | None:
        return self._last

    @property
    def sent(self) -> int:
        """Frames sent since construction."""
        return self._sent

    def history(self) -> list[Frame]:
        """The most recent frames, oldest first (a copy)."""
        return list(self._history)

    def _write(self) -> None:
        assert self._file is not None
        f = self._file
        while True:
            frame = self._queue.get()
            if frame is None:
                f.flush()
                return
            f.write(json.dumps({"t": round(frame.t, 6), "values": frame.values.tolist()}))
            f.write("\n")


def read_recording(path: str | Path) -> list[Frame]:
    """Load a recording written by :class:`SimDriver` (for tests and plots)."""
    import numpy as np

    frames = []
    with Path(path).open(encoding="utf-8") as f:
        for lineno, line in enumerate(f, start=1):
            try:
                row = json.loads(line)
                frames.append(Frame(float(row["t"]), np.array(row["values"], dtype=np.float64)))
            except (ValueError, KeyError, TypeError) as exc:
                raise DriverError(f"{path}:{lineno}: not a recorded frame: {exc}") from exc
    return frames
