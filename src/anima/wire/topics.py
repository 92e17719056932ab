"""The MQTT topic tree under a robot's prefix (``nadine`` by default); see ``docs/mqtt.md``."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Topics:
    prefix: str

    @property
    def control(self) -> str:
        """Prefix of the command topics (``<prefix>/agent/control/``)."""
        return f"{self.prefix}/agent/control/"

    @property
    def control_filter(self) -> str:
        return f"{self.prefix}/agent/control/#"

    def feedback(self, leaf: str) -> str:
        return f"{self.prefix}/agent/feedback/{leaf}"

    @property
    def state(self) -> str:
        return f"{self.prefix}/agent/state"

    @property
    def humanoid_state(self) -> str:
        """The linked humanoid's whole state, retained (beyond Nadine's contract)."""
        return f"{self.prefix}/agent/humanoid/state"

    @property
    def status(self) -> str:
        return f"{self.prefix}/agent/status"

    # beyond Nadine's contract: a robot's presence on a shared broker (docs/fleet.md)
    @property
    def identity(self) -> str:
        return f"{self.prefix}/agent/identity"

    @property
    def health(self) -> str:
        return f"{self.prefix}/agent/health"

    @property
    def ping(self) -> str:
        return f"{self.prefix}/agent/ping"

    @property
    def pong(self) -> str:
        return f"{self.prefix}/agent/pong"

    def session(self, client_id: str) -> str:
        """The door's own topic for its session marker (see ``session.py``); not a command."""
        level = "".join("_" if c in "/+#" else c for c in client_id)
        return f"{self.prefix}/agent/session/{level}"
