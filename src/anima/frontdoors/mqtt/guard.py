"""The boundary around paho's callbacks: no exception leaves one.

paho-mqtt 2 re-raises what a callback raises, on its network thread, which then ends: the
client goes deaf — estop included — while the broker, and ``is_connected()``, still see it
healthy. One 400-digit number in a humanoid posture did that. So every callback the door gives
paho is wrapped here: an ``Exception`` costs the one message (the door answers it on the error
topic) and is logged with its traceback once per callback and kind, then only counted, so a
flood of the same bad message cannot flood the log. What is not an ``Exception`` (a
``BaseException`` such as ``SystemExit``) is reported to the door and let through: the door's
watchdog then notices the dead thread and restarts it (``frontdoor.py``).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any

log = logging.getLogger(__name__)

LOG_EVERY = 1000  # after the first of a kind, one warning per this many failures

Callback = Callable[..., None]
OnFailure = Callable[[Exception, tuple[Any, ...]], None]
OnCrash = Callable[[str, BaseException, tuple[Any, ...]], None]


class CallbackBoundary:
    """Wraps paho callbacks so that they never raise; counts and logs what they raised."""

    def __init__(self, on_crash: OnCrash) -> None:
        self._on_crash = on_crash
        self._lock = threading.Lock()
        self._seen: set[tuple[str, str]] = set()
        self.failures = 0  # exceptions kept inside a callback
        self.crashes = 0  # BaseExceptions let through (the network thread ended)

    def guard(self, name: str, callback: Callback, on_failure: OnFailure | None = None) -> Callback:
        """``callback``, but what it raises is counted, logged and given to ``on_failure``."""

        def guarded(*args: Any) -> None:
            try:
                callback(*args)
            except Exception as exc:
                self._failed(name, exc)
                if on_failure is not None:
                    try:
                        on_failure(exc, args)
                    except Exception as again:  # answering must not be the next crash
                        self._failed(f"{name} (answering a failure)", again)
            except BaseException as exc:
                with self._lock:
                    self.crashes += 1
                log.error("MQTT %s raised %s: paho's network thread ends", name, type(exc).__name__)
                self._on_crash(name, exc, args)
                raise

        return guarded

    def _failed(self, name: str, exc: Exception) -> None:
        key = (name, type(exc).__name__)
        with self._lock:
            self.failures += 1
            count = self.failures
            first = key not in self._seen
            self._seen.add(key)
        if first:
            log.error(
                "MQTT %s failed (%s: %s); the door keeps serving, and logs this kind once",
                name,
                type(exc).__name__,
                describe(exc),
                exc_info=exc,
            )
        elif count % LOG_EVERY == 0:
            log.warning("MQTT callbacks failed %d times (latest: %s in %s)", count, key[1], name)


def describe(exc: BaseException, limit: int = 120) -> str:
    """``exc``'s message, cut to ``limit`` characters (a refusal must stay short)."""
    text = str(exc).replace("\n", "\\n")
    return text if len(text) <= limit else text[:limit] + "…"
