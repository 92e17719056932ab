"""Another anima on the door's prefix: what the door does once presence found it live.

:mod:`presence` tells a live instance from a stale retained identity; this decides what
follows. The robot's health warns of the other one (a live identity, or the older of two) for
``WARNING_S`` after the last sign of it. When the two take the broker's session from each
other — the same client id, so neither can serve — the newer stands down: the door stops
serving MQTT for good and its health says why until it is restarted with a prefix of its own.
A live identity alone never stands a door down: anyone on the broker may publish one.

Decided on paho's thread (:meth:`found`), carried out on the door's watch thread (paho's own
cannot stop its loop); pure logic on an injected clock.
"""

from __future__ import annotations

import time
from collections.abc import Callable, MutableMapping

from anima.config import MqttConfig
from anima.frontdoors.mqtt.presence import who
from anima.wire.mqtt import BrokerAddress

WARNING_S = 60.0  # how long the health warns of another anima seen on the prefix
PROBLEM = "mqtt"  # the key of the door's problem in the health's problems


class PrefixConflict:
    """What the door does about another anima on its prefix; ``problems`` is the health's."""

    def __init__(
        self,
        config: MqttConfig,
        address: BrokerAddress,
        problems: MutableMapping[str, str],
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.config = config
        self.address = address
        self._problems = problems
        self._clock = clock
        self.stand_down_for = ""  # decided: why the door must stop serving MQTT
        self.stood_down = ""  # done: the door no longer serves MQTT, for this reason
        self._warn_until = 0.0

    def found(self, payload: bytes, *, newer: bool, taking_session: bool) -> None:
        """Presence found another instance live (its identity ``payload``)."""
        other = f"another anima ({who(payload)})"
        prefix = self.config.prefix
        if not (newer and taking_session):
            self._problems[PROBLEM] = (
                f"{other} serves prefix {prefix!r} too: give each its own mqtt.prefix"
            )
            self._warn_until = self._clock() + WARNING_S
        elif not self.stand_down_for:
            self.stand_down_for = (
                f"not serving MQTT: {other} started earlier on prefix {prefix!r} of "
                f"{self.address} and takes the broker's session: give this one its own "
                "mqtt.prefix and restart it"
            )

    @property
    def due(self) -> bool:
        """The door must stand down now (it has not yet)."""
        return bool(self.stand_down_for) and not self.stood_down

    def stood(self) -> str:
        """The door stood down: its health says why from now on; the reason."""
        self.stood_down = self.stand_down_for
        self._problems[PROBLEM] = self.stood_down
        return self.stood_down

    def tick(self) -> None:
        """On the watch: the warning goes a while after the last sign of the other one."""
        if self._warn_until and self._clock() > self._warn_until and not self.stood_down:
            self._warn_until = 0.0
            self._problems.pop(PROBLEM, None)
