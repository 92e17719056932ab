"""A realtime session's tool calls, run one at a time on a worker thread of their own (both
protocols: :mod:`.session` for OpenAI's, :mod:`.gemini` for Google's)."""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Callable, Iterable

log = logging.getLogger(__name__)


class Calls:
    """The tool calls' worker: one call at a time, in arrival order, on a thread it owns.
    A call canceled before it starts is skipped (:meth:`cancel`)."""

    def __init__(self, run: Callable[[str, str, object], None]) -> None:
        self._run = run
        self._queue: queue.Queue[tuple[str, str, object] | None] = queue.Queue()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self._waiting: set[str] = set()  # call ids queued
        self._canceled: set[str] = set()  # call ids queued or running, not to go on
        self.running: str | None = None  # the call id running now

    def start(self) -> None:
        self._thread = threading.Thread(target=self._loop, name="anima-realtime-calls")
        self._thread.daemon = True
        self._thread.start()

    def put(self, call_id: str, name: str, arguments: object) -> None:
        with self._lock:
            self._waiting.add(call_id)
        self._queue.put((call_id, name, arguments))

    def cancel(self, ids: Iterable[str]) -> bool:
        """Calls ``ids`` are not run if still waiting; True when one of them is running now
        (its plan is the caller's to cancel)."""
        with self._lock:
            known = self._waiting | ({self.running} if self.running is not None else set())
            self._canceled.update(known.intersection(ids))  # ids long done are no concern
            return self.running is not None and self.running in self._canceled

    def canceled(self, call_id: str) -> bool:
        """The running call ``call_id`` was canceled (its outcome is not to be told)."""
        with self._lock:
            return call_id in self._canceled

    def stop(self, timeout: float) -> None:
        self._queue.put(None)
        if self._thread is not None:
            self._thread.join(timeout)
            if self._thread.is_alive():
                log.warning("realtime: the tool calls' thread did not stop in %g s", timeout)
            self._thread = None

    def _loop(self) -> None:
        while (call := self._queue.get()) is not None:
            with self._lock:
                self._waiting.discard(call[0])
                if call[0] in self._canceled:
                    self._canceled.discard(call[0])
                    log.info("realtime: tool call %s canceled before it ran", call[1][:60])
                    continue
                self.running = call[0]
            try:
                self._run(*call)
            except Exception:  # one call must not end the worker
                log.exception("realtime: tool call %s failed", call[1][:60])
            finally:
                with self._lock:
                    self.running = None
                    self._canceled.discard(call[0])
