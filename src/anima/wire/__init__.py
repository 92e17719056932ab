"""The JSON wire contract, in both directions: what every front door reads and writes, and what
the SDK, the remote ears and the test probe read and write back.

- :data:`PAYLOAD_VERSION` and :func:`encode`: every JSON message anima sends carries ``"v": 1``;
- :mod:`~anima.wire.payloads`: payloads parsed and validated, once, into typed commands;
- :mod:`~anima.wire.humanoid`: the humanoid's command payloads;
- :mod:`~anima.wire.topics`: the MQTT topic tree under a robot's prefix, and which event goes
  to which feedback topic;
- :mod:`~anima.wire.events`: events to JSON and back, driven by the event dataclasses;
- :mod:`~anima.wire.state`: the runtime's state snapshot, typed (:class:`RuntimeState`);
- :mod:`~anima.wire.session`: the session file (``anima record``, ``anima serve --record``);
- :mod:`~anima.wire.mqtt`: broker addresses and the one MQTT client factory (auth, TLS).

Nothing here imports a front door, the runtime or the SDK: they import it.
"""

from __future__ import annotations

import json
from typing import Any

PAYLOAD_VERSION = 1  # "v" in every JSON payload anima sends


def encode(**fields: Any) -> str:
    """A JSON payload as anima sends it: compact, with ``"v"`` first."""
    return json.dumps({"v": PAYLOAD_VERSION, **fields}, separators=(",", ":"))
