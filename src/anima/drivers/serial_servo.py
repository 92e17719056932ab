"""The serial servo board (Nadine): one packet per tick over pyserial; it survives unplugging.

States: **closed** (before ``connect()``, after ``disconnect()``: ``send()`` raises
:class:`~anima.errors.DriverNotConnectedError`); **linked** (``send()`` writes one packet of
:mod:`anima.drivers.serial_protocol` per frame); **lost** (the port vanished: cable out, board
reset): ``is_connected`` is False, frames are dropped, never queued, and a thread the driver owns
reopens the port with backoff until it is linked again. ``send()`` never raises for a vanished
port. A write holds the tick at most ``write_timeout_s``; one that times out drops its frame and
flushes the OS buffer, whose contents are stale motion by then.
"""

from __future__ import annotations

import logging
import os
import select
import threading
import time
from dataclasses import dataclass
from types import ModuleType
from typing import TYPE_CHECKING

import numpy as np

from anima.body import Body
from anima.config import SerialDriverConfig
from anima.drivers.base import Frame, LinkCounters
from anima.drivers.serial_protocol import pack, to_bytes
from anima.errors import DriverError, DriverNotConnectedError, MissingDependencyError

if TYPE_CHECKING:
    from serial import Serial

log = logging.getLogger(__name__)


@dataclass(frozen=True, kw_only=True)
class SerialStats:
    """What the driver did since construction (write costs over the recent window)."""

    sent: int  # packets written whole
    dropped: int  # frames not written: port lost, or the write timed out
    timeouts: int  # writes that hit write_timeout_s
    losses: int  # times the port was lost
    reconnects: int  # times it was reopened
    write_p50_us: float  # time inside send(): encode + write, microseconds
    write_p99_us: float


class SerialServoDriver:
    """Drives a servo board on a serial device (a path, or a symlink such as udev's by-id)."""

    def __init__(
        self,
        port: str,
        *,
        baud: int = 115200,
        write_timeout_s: float = 0.002,
        reconnect_s: tuple[float, float] = (0.25, 2.0),
        cost_window: int = 16384,
    ) -> None:
        if baud <= 0 or write_timeout_s <= 0 or not 0 < reconnect_s[0] <= reconnect_s[1]:
            raise ValueError("baud and write_timeout_s must be > 0, 0 < reconnect_s[0] ≤ [1]")
        self.port = port
        self.baud = baud
        self.write_timeout_s = write_timeout_s
        self.reconnect_s = reconnect_s
        self._serial_mod: ModuleType | None = None
        self._open = False  # between connect() and disconnect(): what the caller asked for
        # the live port and its fd, swapped as one value so the engine thread never pairs a port
        # with another port's fd; None while closed or lost
        self._link: tuple[Serial, int] | None = None
        self._dead: Serial | None = None  # a lost port, closed by the reconnect thread
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._costs = np.zeros(max(1, cost_window))
        self._writes = 0
        self._sent = self._dropped = self._timeouts = self._losses = self._reconnects = 0
        self.error = ""  # the last link problem
        self._timing_out = False

    @classmethod
    def from_config(cls, config: SerialDriverConfig, body: Body) -> SerialServoDriver:
        """Port and baud from ``driver`` config, falling back to the body's ``[board]``."""
        return cls(
            config.port or body.board.port,
            baud=config.baud or body.board.baud,
            write_timeout_s=config.write_timeout_s,
            reconnect_s=config.reconnect_s,
        )

    # ------------------------------------------------------------------ Driver protocol
    @property
    def is_connected(self) -> bool:
        return self._link is not None

    def connect(self) -> None:
        """Open the port (raises :class:`DriverError` naming it) and start the reconnect thread."""
        if self._open:
            return
        try:
            import serial
        except ImportError as exc:
            raise MissingDependencyError("pyserial", "serial") from exc
        self._serial_mod = serial
        self._link = self._open_port()
        self._open = True
        self._stop.clear()
        self._wake.clear()
        self._thread = threading.Thread(
            target=self._reconnect_loop, name="anima-serial-reconnect", daemon=True
        )
        self._thread.start()

    def disconnect(self, timeout: float = 2.0) -> None:
        """Stop the reconnect thread (bounded wait) and close the port."""
        if not self._open:
            return
        self._open = False
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout)
            if self._thread.is_alive():
                log.warning(
                    "serial: reconnect thread for %s did not stop in %g s", self.port, timeout
                )
            self._thread = None
        link, dead = self._link, self._dead
        self._link = self._dead = None
        for ser in (link[0] if link else None, dead):
            if ser is not None:
                _close_quietly(ser)

    def send(self, frame: Frame) -> Frame:
        """Write one packet; return the frame as the board gets it (rounded, clamped to bytes)."""
        if not self._open:
            raise DriverNotConnectedError(f"serial {self.port}: send() before connect()")
        begin = time.perf_counter()
        values = to_bytes(frame.values)
        sent = Frame(frame.t, values)
        link = self._link
        if link is None:  # lost: drop, never queue stale motion
            self._dropped += 1
            return sent
        ser, fd = link
        mod = self._serial_mod
        assert mod is not None
        try:
            whole = self._write(fd, pack(values.astype(np.uint8).tobytes()))
        # pyserial wraps most OS errors, but select() on a just-closed fd raises ValueError
        except (mod.SerialException, OSError, ValueError) as exc:
            self._lose(ser, exc)
        else:
            if whole:
                self._sent += 1
                self._timing_out = False
            else:
                self._timed_out(ser)
        self._costs[self._writes % len(self._costs)] = time.perf_counter() - begin
        self._writes += 1
        return sent

    # ------------------------------------------------------------------ introspection
    def link_counters(self) -> LinkCounters:
        """The counters the health model reads (:mod:`anima.health`)."""
        return LinkCounters(
            sent=self._sent,
            dropped=self._dropped,
            timeouts=self._timeouts,
            losses=self._losses,
            reconnects=self._reconnects,
            error=self.error,
        )

    def stats(self) -> SerialStats:
        costs = self._costs[: min(self._writes, len(self._costs))] * 1e6
        p50, p99 = np.percentile(costs, (50, 99)) if costs.size else (0.0, 0.0)
        return SerialStats(
            sent=self._sent,
            dropped=self._dropped,
            timeouts=self._timeouts,
            losses=self._losses,
            reconnects=self._reconnects,
            write_p50_us=float(p50),
            write_p99_us=float(p99),
        )

    # ------------------------------------------------------------------ internals
    def _open_port(self) -> tuple[Serial, int]:
        mod = self._serial_mod
        assert mod is not None
        if not self.port:
            raise DriverError(
                "serial: no port configured (set driver.port or the checker.ini [board] port)"
            )
        ser: Serial | None = None
        try:
            # pyserial opens and configures the device (baud, raw mode); writes go to its fd
            ser = mod.Serial(self.port, self.baud, timeout=0, exclusive=True)  # one writer only
            fd = ser.fileno()
            os.set_blocking(fd, False)
        except (mod.SerialException, OSError, ValueError) as exc:
            if ser is not None:
                _close_quietly(ser)
            raise DriverError(
                f"serial: cannot open {self.port!r} at {self.baud} baud: {exc}"
            ) from exc
        return ser, fd

    def _write(self, fd: int, packet: bytes) -> bool:
        """Write all of ``packet`` within ``write_timeout_s`` (True) or give up on it (False).

        Not pyserial's ``write()``: after a complete write it still waits on the fd and may then
        report a timeout for a packet that did go out (seen under load on a pty).
        """
        deadline = time.perf_counter() + self.write_timeout_s
        rest = memoryview(packet)
        while True:
            try:
                n = os.write(fd, rest)
            except BlockingIOError:  # the OS buffer is full: the board is not draining
                n = 0
            rest = rest[n:]
            if not rest:
                return True
            left = deadline - time.perf_counter()
            if left <= 0:
                return False
            select.select([], [fd], [], left)

    def _timed_out(self, ser: Serial) -> None:
        self._timeouts += 1
        self._dropped += 1
        self.error = f"writes to {self.port} time out (the board does not read them)"
        if not self._timing_out:
            self._timing_out = True
            log.warning("serial %s: write timed out; dropping frames till it drains", self.port)
        try:  # what sits in the OS buffer is stale motion; the decoder resyncs on a cut packet
            ser.reset_output_buffer()
        except Exception as exc:  # the next write will tell whether the port is gone
            log.debug("serial %s: flush failed: %r", self.port, exc)

    def _lose(self, ser: Serial, exc: BaseException) -> None:
        self._link = None
        self._dead = ser
        self._dropped += 1
        self._losses += 1
        self.error = f"port {self.port} lost: {exc}"[:200]
        log.warning("serial %s: port lost (%s); dropping frames, reopening", self.port, exc)
        self._wake.set()

    def _reconnect_loop(self) -> None:
        first, longest = self.reconnect_s
        while True:
            self._wake.wait()
            self._wake.clear()
            if self._stop.is_set():
                return
            dead, self._dead = self._dead, None
            if dead is not None:
                _close_quietly(dead)
            delay, attempts = first, 0
            while not self._stop.wait(delay):
                attempts += 1
                try:
                    link = self._open_port()
                except DriverError as exc:
                    log.debug("serial: reopen attempt %d failed: %s", attempts, exc)
                    delay = min(2 * delay, longest)
                    continue
                if self._stop.is_set():
                    _close_quietly(link[0])
                    return
                self._reconnects += 1
                self._link = link
                log.info("serial %s: port back after %d attempt(s)", self.port, attempts)
                break


def _close_quietly(ser: Serial) -> None:
    try:
        ser.close()
    except Exception as exc:  # closing a vanished device may fail; it is gone either way
        log.debug("serial: close failed: %r", exc)
