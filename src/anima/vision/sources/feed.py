"""The owned thread a source delivers from: it runs the source's loop until the loop returns
why it ended (the file ended, the camera stopped answering) or :meth:`Feed.stop` asks; the
sink's ``end`` is called exactly once, from the thread or, when the thread hangs, from
``stop``."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

from anima.vision.types import FrameSink

log = logging.getLogger(__name__)

STOPPED = "stopped"  # the end reason when the owner stopped the source


class Feed:
    """``loop(stopping)`` on its own thread (named ``anima-<thread>``); it returns the reason
    it ended (it reads ``stopping`` between frames); ``release`` then frees what the source
    opened. ``name`` is the source's, for the log and a failure's reason."""

    def __init__(
        self,
        name: str,
        sink: FrameSink,
        *,
        loop: Callable[[threading.Event], str],
        release: Callable[[], None],
        thread: str,
    ) -> None:
        self.name = name
        self._sink = sink
        self._loop = loop
        self._release = release
        self._stopping = threading.Event()
        self._lock = threading.Lock()
        self._ended = False
        self._thread = threading.Thread(target=self._run, name=f"anima-{thread}", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self, timeout: float) -> None:
        """Ask the loop to stop and wait up to ``timeout`` seconds; ``sink.end`` has been
        called when this returns (with ``stopped`` unless the source had ended by itself)."""
        self._stopping.set()
        if self._thread.is_alive() and self._thread is not threading.current_thread():
            self._thread.join(timeout)
        if self._thread.is_alive():
            log.warning("%s: its thread did not stop within %.1f s", self.name, timeout)
        self._end(STOPPED)  # a no-op when the thread has ended it

    def _run(self) -> None:
        reason = STOPPED
        try:
            reason = self._loop(self._stopping)
        except Exception as exc:  # a source's failure ends its frames, never the runtime
            log.exception("%s failed", self.name)
            reason = f"{self.name} failed: {exc}"
        finally:
            try:
                self._release()
            except Exception:
                log.exception("%s: releasing it failed", self.name)
            self._end(reason)

    def _end(self, reason: str) -> None:
        with self._lock:
            if self._ended:
                return
            self._ended = True
        self._sink.end(reason)
