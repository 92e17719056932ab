"""A fake servo board on a pseudo-terminal: the real ``serial.Serial`` path, no hardware.

The driver opens the pty's slave side as its port; the board reads the master side on its own
thread and checks every byte with the protocol's decoder. ``unplug()`` closes the pty, as pulling
the USB cable removes the device: the driver's next write fails with EIO and the device node is
gone. A new pty gets a new name, so the board hands out a stable symlink it re-points on
``replug()``, the way udev's ``/dev/serial/by-id/...`` links follow a real adapter::

    with FakeServoBoard(channels=28) as board:
        driver = SerialServoDriver(board.port)
        ...
        board.unplug(); board.replug()
        board.wait_for(board.received + 10, timeout=2.0)
"""

from __future__ import annotations

import collections
import os
import select
import tempfile
import threading
import time
import tty
from dataclasses import dataclass
from types import TracebackType

from anima.drivers.serial_protocol import PacketDecoder


@dataclass(frozen=True, slots=True)
class ReceivedFrame:
    """One packet the board decoded: when its last chunk was read, and the channel bytes."""

    t: float  # time.monotonic() of the read that completed the packet
    values: tuple[int, ...]


class FakeServoBoard:
    """Plays the servo board on a pty; records decoded frames and counts bad packets.

    ``channels``: the count every packet must carry (others count as bad); None accepts any.
    ``history``: frames kept for :meth:`frames` (``received`` counts them all).
    """

    def __init__(self, *, channels: int | None = None, history: int = 100_000) -> None:
        self._channels = channels
        self._dir = tempfile.mkdtemp(prefix="anima-servo-board-")
        self.port = os.path.join(self._dir, "ttyBOARD")  # stable across replug (a symlink)
        self._frames: collections.deque[ReceivedFrame] = collections.deque(maxlen=history)
        self._cond = threading.Condition()
        self._received = 0
        self._bad = 0
        self._bytes = 0
        self._fds: tuple[int, int] | None = None  # (master, slave) while plugged
        self._device = ""
        self._reader: threading.Thread | None = None
        self._stop_r, self._stop_w = -1, -1
        self._closed = False
        self.replug()

    # ------------------------------------------------------------------ plugging
    @property
    def plugged(self) -> bool:
        return self._fds is not None

    @property
    def device(self) -> str:
        """The current pty slave (``/dev/pts/N``); empty while unplugged."""
        return self._device

    def replug(self) -> None:
        """Attach a new pty and point :attr:`port` at it (no-op while plugged)."""
        if self._closed:
            raise RuntimeError("FakeServoBoard: replug() after stop()")
        if self._fds is not None:
            return
        master, slave = os.openpty()
        tty.setraw(master)
        tty.setraw(slave)
        # the board keeps its slave fd open: reads on the master would fail with EIO whenever
        # no process has the slave open (between the driver's close and its reopen)
        self._fds = (master, slave)
        self._device = os.ttyname(slave)
        tmp = self.port + ".new"
        os.symlink(self._device, tmp)
        os.replace(tmp, self.port)  # atomic: the driver never sees a half-made link
        self._stop_r, self._stop_w = os.pipe()
        self._reader = threading.Thread(
            target=self._read, args=(master, self._stop_r), name="anima-fake-board", daemon=True
        )
        self._reader.start()

    def unplug(self) -> None:
        """Remove the device: the link goes, the pty closes, the driver's writes fail (EIO)."""
        if self._fds is None:
            return
        if os.path.lexists(self.port):
            os.unlink(self.port)
        reader = self._reader
        os.write(self._stop_w, b"x")
        if reader is not None:
            reader.join(2.0)
            if reader.is_alive():
                raise RuntimeError("FakeServoBoard: reader thread did not stop")
        self._reader = None
        for fd in (*self._fds, self._stop_r, self._stop_w):
            os.close(fd)
        self._fds = None
        self._device = ""

    def stop(self) -> None:
        """Unplug for good, join the reader and remove the temporary directory."""
        if self._closed:
            return
        self.unplug()
        self._closed = True
        os.rmdir(self._dir)

    def __enter__(self) -> FakeServoBoard:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    # ------------------------------------------------------------------ what tests look at
    @property
    def received(self) -> int:
        """Valid packets decoded since construction."""
        return self._received

    @property
    def bad(self) -> int:
        """Packets rejected (bad CRC, or a channel count other than ``channels``)."""
        return self._bad

    @property
    def bytes_read(self) -> int:
        return self._bytes

    def frames(self) -> list[ReceivedFrame]:
        """Recently decoded frames, oldest first (a copy)."""
        with self._cond:
            return list(self._frames)

    def wait_for(self, count: int, timeout: float) -> bool:
        """Block until ``received >= count`` (True) or ``timeout`` seconds pass (False)."""
        with self._cond:
            return self._cond.wait_for(lambda: self._received >= count, timeout)

    # ------------------------------------------------------------------ the board's thread
    def _read(self, master: int, stop: int) -> None:
        decoder = PacketDecoder(channels=self._channels)  # a fresh link starts unsynced
        bad = 0
        while True:
            ready, _, _ = select.select([master, stop], [], [])
            if stop in ready:
                return
            try:
                chunk = os.read(master, 4096)
            except OSError:  # EIO while no slave is open; the board keeps one, so rare
                chunk = b""
            if not chunk:
                time.sleep(0.001)
                continue
            now = time.monotonic()
            payloads = decoder.feed(chunk)
            with self._cond:
                self._bytes += len(chunk)
                self._bad += decoder.bad - bad
                bad = decoder.bad
                for p in payloads:
                    self._frames.append(ReceivedFrame(now, tuple(p)))
                self._received += len(payloads)
                if payloads:
                    self._cond.notify_all()
