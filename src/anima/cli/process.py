"""What `anima serve` does for the process as a whole: its open-files limit and its reloads.

- :func:`raise_open_files_limit`: the soft ``RLIMIT_NOFILE`` raised to the hard one at start.
  Debian's default soft limit is 1,024 while the hard one is far higher: slow clients, Piper,
  MQTT and the animation files share it, and 1,024 was the ceiling a flood of connections hit.
- :class:`Reloads`: SIGHUP reloads merged, one running and at most one pending. Before, each
  signal started its own thread: 50 SIGHUPs in 5 s ran 37 reloads at once (threads 17 → 54,
  +98 MB of RSS kept). Any number of requests during a reload make one more reload after it,
  which sees every change made before it started.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

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
