"""What `anima serve` does for the process as a whole: its open-files limit, its pid file and
its reloads.

- :func:`raise_open_files_limit`: the soft ``RLIMIT_NOFILE`` raised to the hard one at start.
  Debian's default soft limit is 1,024 while the hard one is far higher: slow clients, Piper,
  MQTT and the animation files share it, and 1,024 was the ceiling a flood of connections hit.
- :func:`claim_pid_file`: ``instances``' pid file for this prefix (``anima animations reload``
  and ``anima fleet`` find the running serve by it).
- :class:`Reloads`: SIGHUP reloads merged, one running and at most one pending. Before, each
  signal started its own thread: 50 SIGHUPs in 5 s ran 37 reloads at once (threads 17 → 54,
  +98 MB of RSS kept). Any number of requests during a reload make one more reload after it,
  which sees every change made before it started.
- :class:`Signals`: SIGTERM, SIGINT and SIGHUP read by the main loop, not acted on in handlers.
  A Python handler runs on the main thread between any two bytecodes, even inside another
  handler: a SIGHUP storm under load ran one ``on_hup`` inside another's ``Event.set``, which
  waited for ever for the Event's lock its own thread held, and the SIGTERM after it was
  logged but never acted on (``anima serve`` hung until killed).
"""

from __future__ import annotations

import contextlib
import logging
import os
import select
import signal
import threading
from collections.abc import Callable
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Any

from anima import instances

if TYPE_CHECKING:
    from anima.runtime import Runtime

_Handler = Callable[[int, FrameType | None], Any] | int | signal.Handlers | None

log = logging.getLogger(__name__)


def raise_open_files_limit() -> tuple[int, int]:
    """Raise the soft limit on open files to the hard one; returns (before, after) soft
    limits, the same twice where it cannot be raised (no ``resource`` module, or refused)."""
    try:
        import resource
    except ImportError:  # not on POSIX
        return (-1, -1)
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard == resource.RLIM_INFINITY or hard > soft:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
        except (ValueError, OSError) as exc:  # macOS refuses RLIM_INFINITY, for one
            log.debug("open files: soft limit %d kept (hard %d): %s", soft, hard, exc)
            return (soft, soft)
    after = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    log.debug("open files: soft limit %d → %d (hard %d)", soft, after, hard)
    return (soft, after)


class Reloads:
    """Run ``reload`` on a worker thread when asked, merging requests: one reload runs at a
    time, and any number of requests made while it runs make a single one after it.

    :meth:`request` only sets an event, so a signal handler may call it: the handler never
    waits for a lock the interrupted main thread might hold. A failing reload is logged and
    the worker goes on. :meth:`start` and :meth:`stop` bound the worker's life.
    """

    def __init__(self, reload: Callable[[], object], name: str = "anima-reload") -> None:
        self._reload = reload
        self._wake = threading.Event()
        self._stopping = False
        # a daemon: a reload stuck on a file must not keep the process alive once stop()
        # has waited for it
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self.runs = 0  # reloads carried out (or attempted)

    def start(self) -> Reloads:
        self._thread.start()
        return self

    def request(self) -> None:
        """Ask for a reload: now if none runs, else once after the running one."""
        self._wake.set()

    def stop(self, timeout: float = 2.0) -> bool:
        """End the worker after the reload it runs, if any; False if that outlasts
        ``timeout`` s (the daemon thread is left to the process exit)."""
        self._stopping = True
        self._wake.set()
        if self._thread.is_alive():
            self._thread.join(timeout)
        return not self._thread.is_alive()

    def _run(self) -> None:
        while True:
            self._wake.wait()
            if self._stopping:
                return
            self._wake.clear()  # a request from now on is one more reload, after this one
            self.runs += 1
            try:
                self._reload()
            except Exception:  # a reload that fails must not end the reloads
                log.exception("reload failed")


_STOPS = (signal.SIGTERM, signal.SIGINT)
_ASKED = 0  # the byte :meth:`Signals.stop` writes: no signal has the number 0


def _noted(_signum: int, _frame: FrameType | None) -> None:
    """The Python-level handler: nothing. The C-level one has written the signal's number to
    the wakeup pipe already, and a handler that took a lock or logged could wait for ever on
    what the code it interrupted (perhaps another handler) holds."""


class Signals:
    """The main thread's wait for a stop (SIGTERM, SIGINT, or :meth:`stop` from any thread),
    which runs ``on_hup`` once per SIGHUP, or several close together, it reads.

    CPython's C-level handler writes each signal's number to a pipe (``signal.set_wakeup_fd``)
    on whichever thread the kernel delivered it to, and :meth:`wait` reads them there in
    ``select``: it wakes even when another thread took the signal, and nothing runs in a
    handler. Bounded life: :meth:`install` on the main thread, :meth:`close` at the end.
    """

    def __init__(self, on_hup: Callable[[], object]) -> None:
        self._on_hup = on_hup
        self._read, self._write = os.pipe()
        os.set_blocking(self._read, False)
        os.set_blocking(self._write, False)  # set_wakeup_fd's requirement: a handler never waits
        self._stopped = False
        self._closed = False
        self._closing = threading.Lock()  # the console's stop() against close(): never a handler's
        self._previous_fd = -1
        self._previous: dict[signal.Signals, _Handler] = {}

    def install(self) -> Signals:
        """Take SIGTERM, SIGINT and SIGHUP (on the main thread only, as ``signal`` requires)."""
        # a storm fills no pipe (64 KiB), and a full one has bytes to wake the wait already
        self._previous_fd = signal.set_wakeup_fd(self._write, warn_on_full_buffer=False)
        for signum in (*_STOPS, signal.SIGHUP):
            self._previous[signum] = signal.signal(signum, _noted)
        return self

    def stop(self) -> None:
        """Ask the main loop to stop (the console's ``q``); any thread may call it."""
        with self._closing, contextlib.suppress(BlockingIOError):  # full: bytes there wake it
            if not self._closed:  # a closed pipe's descriptor may be another file's now
                os.write(self._write, bytes([_ASKED]))

    def wait(self, timeout: float) -> bool:
        """Whether a stop was asked, waiting up to ``timeout`` s for one; a SIGHUP read on the
        way runs ``on_hup``."""
        if not self._stopped and select.select([self._read], [], [], max(timeout, 0.0))[0]:
            self._take(self._drain())
        return self._stopped

    def _drain(self) -> bytes:
        chunks = []
        while True:
            try:
                chunk = os.read(self._read, 4096)
            except BlockingIOError:
                break
            if not chunk:
                break
            chunks.append(chunk)
        return b"".join(chunks)

    def _take(self, numbers: bytes) -> None:
        if signal.SIGHUP in numbers and not self._stopped:
            self._on_hup()  # a storm read at once is one request (Reloads merges the rest)
        for number in set(numbers) & {*_STOPS, _ASKED}:
            if number != _ASKED and not self._stopped:
                name = signal.Signals(number).name
                log.info("received %s: easing to rest and stopping", name)
            self._stopped = True

    def close(self) -> None:
        """Give the signals back to the handlers (and wakeup fd) there were; close the pipe."""
        signal.set_wakeup_fd(self._previous_fd)
        for signum, handler in self._previous.items():
            if handler is not None:  # None: not set from Python; no way to restore it
                signal.signal(signum, handler)
        self._previous.clear()
        with self._closing:
            if not self._closed:
                self._closed = True
                os.close(self._read)
                os.close(self._write)


def claim_pid_file(prefix: str, runtime: Runtime) -> Path | None:
    """This instance's pid file, for `anima animations reload` (None: reload by pid only)."""
    try:
        from anima.frontdoors.mqtt.frontdoor import MqttFrontDoor  # built already: no cost

        mqtt = [str(d.address) for d in runtime.frontdoors if isinstance(d, MqttFrontDoor)]
        path = instances.claim(prefix, broker=mqtt[0] if mqtt else None)  # for anima fleet
    except OSError as exc:
        log.warning(
            "cannot write %s (reload by pid file unavailable): %s", instances.pid_file(prefix), exc
        )
        return None
    if path is None:
        log.warning(
            "another anima serve already serves the prefix %r (%s): reload this one by pid",
            prefix,
            instances.pid_file(prefix),
        )
    return path


def process_age_s() -> float | None:
    """Seconds since this process was created (Linux: ``/proc/self/stat``, to the kernel's
    clock tick, 10 ms), or None where that cannot be read."""
    try:
        with open("/proc/self/stat", encoding="ascii") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        with open("/proc/uptime", encoding="ascii") as f:
            uptime = float(f.read().split()[0])
        # field 22, starttime, is the 20th after the command's closing parenthesis
        return uptime - int(fields[19]) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return None
