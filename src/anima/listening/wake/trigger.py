"""A wake that does not come from the audio: a key, a button, MQTT.

A front door holds a :class:`WakeTrigger` and calls :meth:`WakeTrigger.trigger`; the listener it
is connected to wakes as if it heard the phrase.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

logger = logging.getLogger(__name__)


class WakeTrigger:
    """A wake from outside the audio. Thread-safe; handlers run on the caller's thread."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._handlers: list[Callable[[str], None]] = []

    def connect(self, handler: Callable[[str], None]) -> Callable[[], None]:
        """Call ``handler(source)`` on every trigger; returns the function that disconnects it."""
        with self._lock:
            self._handlers.append(handler)

        def disconnect() -> None:
            with self._lock:
                if handler in self._handlers:
                    self._handlers.remove(handler)

        return disconnect

    def trigger(self, source: str = "manual") -> None:
        """Wake every connected listener; ``source`` says who asked (``keyboard``, ``mqtt``…)."""
        with self._lock:
            handlers = list(self._handlers)
        if not handlers:
            logger.info("wake trigger from %s: no listener connected", source)
        for handler in handlers:
            handler(source)
