"""The simulated robot: accepts every frame, remembers recent ones, can record them all.

Recording writes a session file (:mod:`anima.wire.session`, what ``anima plot`` reads): a
``hello`` line with the body's channels, then one ``state`` line per frame with its engine time
``t`` (the tick's deadline), ``rt`` (seconds since the first frame), ``sent_at`` (this machine's
monotonic clock when the driver got it: gaps in it are the loop's real stalls) and ``values``.
A writer thread the driver owns does the writing, so the engine's tick never waits on a disk.
"""

from __future__ import annotations

import collections
import json
import logging
import queue
import threading
import time
from pathlib import Path
from typing import IO, TYPE_CHECKING

from anima.drivers.base import Frame
from anima.errors import DriverError, DriverNotConnectedError
from anima.wire.session import SESSION_VERSION, hello

if TYPE_CHECKING:
    from anima.body import Body

RECORD_HZ = 100.0  # the hello's updates_hz: one line per frame of the 100 Hz loop

log = logging.getLogger(__name__)


class SimDriver:
    """A robot that is only its last frame, a bounded history, and optionally a recording."""

    def __init__(
        self, *, history: int = 1000, record: str | Path | None = None, body: Body | None = None
    ) -> None:
        """``record``: a session file to write, which names ``body``'s channels (so it needs it)."""
        if history < 1:
            raise ValueError(f"history must be ≥ 1, got {history}")
        if record is not None and body is None:
            raise ValueError("a recording names the body's channels: pass body=")
        self._body = body
        self._history: collections.deque[Frame] = collections.deque(maxlen=history)
        self._record_path = Path(record) if record is not None else None
        self._connected = False
        self._last: Frame | None = None
        self._sent = 0
        self._queue: queue.SimpleQueue[tuple[Frame, float] | None] = queue.SimpleQueue()
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
            raise DriverNotConnectedError("sim: send() before connect()")
        self._last = frame
        self._history.append(frame)
        self._sent += 1
        if self._writer is not None:
            self._queue.put((frame, time.monotonic()))
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
        assert self._body is not None
        f = self._file
        f.write(json.dumps({**hello(self._body, updates_hz=RECORD_HZ), "rt": 0.0}) + "\n")
        t0: float | None = None
        while True:
            item = self._queue.get()
            if item is None:
                f.flush()
                return
            frame, sent_at = item
            t0 = frame.t if t0 is None else t0
            line = {
                "v": SESSION_VERSION,
                "type": "state",
                "t": round(frame.t, 6),
                "rt": round(frame.t - t0, 6),
                "sent_at": round(sent_at, 6),
                "values": frame.values.tolist(),
            }
            f.write(json.dumps(line, separators=(",", ":")) + "\n")


def read_recording(path: str | Path) -> list[Frame]:
    """The frames of a recording written by :class:`SimDriver` (for tests and tools)."""
    import numpy as np

    frames = []
    with Path(path).open(encoding="utf-8") as f:
        for lineno, line in enumerate(f, start=1):
            try:
                row = json.loads(line)
                if row.get("type") == "hello":
                    continue
                frames.append(Frame(float(row["t"]), np.array(row["values"], dtype=np.float64)))
            except (ValueError, KeyError, TypeError) as exc:
                raise DriverError(f"{path}:{lineno}: not a recorded frame: {exc}") from exc
    return frames
