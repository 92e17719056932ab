"""The door's QoS 1 publishes awaiting the broker's acknowledgement, and when to stop adding.

paho keeps each unacknowledged QoS 1 message as a dozen objects the cyclic garbage collector
walks: under a flood of 14,000 refusals every full collection held the interpreter ~30 ms,
three ticks of the motion loop. So past ``limit`` unacknowledged publishes, feedback goes at
QoS 0 until the broker catches up (the link is up: only the retry is given up), and the log
says so once per 10,000.
"""

from __future__ import annotations

import logging
import time

log = logging.getLogger(__name__)

MAX_UNACKED = 1000  # QoS 1 publishes awaiting their PUBACK before feedback goes at QoS 0
UNACKED_TTL_S = 30.0  # an id noted longer ago than this is forgotten (see pending)


class AckWindow:
    """Message ids sent at QoS 1 and not yet acknowledged. Thread-safe through the GIL: each
    operation is one dict operation, so paho's thread and the publishers need no lock (a lock
    here could deadlock with paho's own, which it holds while calling on_publish)."""

    def __init__(self, limit: int = MAX_UNACKED, ttl_s: float = UNACKED_TTL_S) -> None:
        self.limit = limit
        self.ttl_s = ttl_s
        self._sent: dict[int, float] = {}  # id → when it was sent
        self._pruned_at = 0.0
        self.downgraded = 0  # publishes asked at QoS 1 and sent at QoS 0

    def qos_for(self, qos: int) -> int:
        """The QoS to publish at: ``qos``, or 0 while too many are unacknowledged."""
        if not qos or len(self._sent) < self.limit or self.pending() < self.limit:
            return qos
        self.downgraded += 1
        if self.downgraded == 1 or self.downgraded % 10_000 == 0:
            log.warning(
                "MQTT: %d messages await the broker's acknowledgement: feedback goes at QoS 0 "
                "until it catches up (%d so far)",
                len(self._sent),
                self.downgraded,
            )
        return 0

    def sent(self, mid: int) -> None:
        self._sent[mid] = time.monotonic()

    def acknowledged(self, mid: int) -> None:
        self._sent.pop(mid, None)

    def clear(self) -> None:
        """A new session: nothing in flight will be acknowledged."""
        self._sent.clear()

    def pending(self) -> int:
        """How many await their acknowledgement. Ids older than ``ttl_s`` are forgotten, at most
        once a second: an acknowledgement that came (on paho's thread) before its id was noted
        would otherwise stay forever."""
        now = time.monotonic()
        if now - self._pruned_at >= 1.0:
            self._pruned_at = now
            for mid, at in list(self._sent.items()):
                if at < now - self.ttl_s:
                    self._sent.pop(mid, None)
        return len(self._sent)
