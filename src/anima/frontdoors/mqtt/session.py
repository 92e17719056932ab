"""The broker's persistent session: which commands it queued while anima's link was down.

anima connects with ``clean_session`` false and a stable client id, so while its link is down
the broker keeps its subscription and queues the QoS 1 commands sent meanwhile (QoS 0 ones are
not queued: MQTT delivers them to connected clients only). After reconnecting the broker
delivers that backlog first. To tell it apart from live commands, the door publishes a
*marker* to its own session topic right after subscribing; the broker queues it behind the
backlog, so every command that arrives before the marker was queued during the outage.

The age of a queued command is not on the wire (MQTT 3.1.1 carries no timestamp), but it is at
most the outage's length. So: after an outage longer than ``stale_after_s``, the backlog is
refused with a reason (sent again, it runs) rather than carried out late — except ``estop``,
which is never dropped. A session that was already there when this process first connected
(a crashed run left it) holds commands of unknown age: treated as stale too. A clean stop ends
the session, so nothing is queued for a robot that was switched off on purpose.

Pure logic on an injected clock; the door calls it from paho's thread.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable

ALWAYS_CARRIED_OUT = frozenset({"estop"})  # control leaves never refused as stale


class Backlog:
    """Follows the link's outages and says which queued commands are too old to carry out."""

    def __init__(self, stale_after_s: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.stale_after_s = stale_after_s
        self._clock = clock
        self._ever_connected = False
        self._down_since: float | None = None
        self._catching_up = False  # between a CONNACK with a session and our marker
        self.outage_s = 0.0  # the last outage (inf: a session left by an earlier run)
        self.marker = ""  # the payload of the marker we wait for

    def connected(self, session_present: bool, marker: str) -> float:
        """A CONNACK came: returns the outage it ends (0 on a first connect, inf: unknown)."""
        now = self._clock()
        if not self._ever_connected:
            outage = math.inf if session_present else 0.0
        elif self._down_since is not None:
            outage = now - self._down_since
        else:
            outage = 0.0
        self._ever_connected = True
        self._down_since = None
        self._catching_up = session_present
        self.outage_s = outage
        self.marker = marker
        return outage

    def disconnected(self) -> None:
        if self._down_since is None:
            self._down_since = self._clock()

    def marker_arrived(self, payload: str) -> bool:
        """True when ``payload`` is our marker: the backlog is over (an older one is ignored)."""
        if payload != self.marker:
            return False
        self._catching_up = False
        return True

    @property
    def catching_up(self) -> bool:
        return self._catching_up

    def stale(self, leaf: str) -> str | None:
        """Why a command on ``control/<leaf>`` arriving now is refused as stale, or None."""
        if not self._catching_up or leaf in ALWAYS_CARRIED_OUT:
            return None
        if self.outage_s <= self.stale_after_s:
            return None
        bound = f"mqtt.stale_after_s = {self.stale_after_s:g} s"
        if math.isinf(self.outage_s):
            return (
                "stale: the broker queued it for an earlier run of this robot (age unknown, "
                f"over {bound}); send it again"
            )
        return (
            f"stale: the broker queued it while anima's link was down {self.outage_s:.1f} s "
            f"(over {bound}); send it again"
        )
