"""The session file: one JSON Lines format for every recording anima writes.

``anima record`` (the dashboard's WebSocket, or in-process) and ``anima serve --record`` (every
frame the simulated driver sends) both write it, and ``anima plot`` reads it:

- line 1, ``{"v":1,"type":"hello","body":{"channels":[…],"postures":[…]},"rt":0.0,…}``: the
  channels with their limits, so a file is self-describing;
- ``{"v":1,"type":"state","rt":…,"values":[…],…}``: a frame (``values`` in channel units);
  ``anima record`` adds the runtime's state fields, the driver's recording the frame's engine
  time ``t``;
- ``{"v":1,"type":"event","kind":…,"rt":…,…}``: an event (``anima record`` only: the driver does
  not see events).

``rt`` is seconds since the recording started. docs/web.md describes the messages' fields.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from anima.wire.jsontypes import JsonObject

if TYPE_CHECKING:
    from anima.body import Body

SESSION_VERSION = 1  # the "v" of each line (the front doors' PAYLOAD_VERSION)


def body_fields(body: Body) -> JsonObject:
    """The body's name, its channels with their limits and roles, and the named postures."""
    return {
        "name": body.name,
        "channels": [
            {
                "index": i,
                "name": c.name,
                "min": c.min,
                "max": c.max,
                "default": c.default,
                "role": c.role.value,
                "closed": c.closed,
                "calibration": None
                if c.calibration is None
                else {"zero": c.calibration.zero, "rad_per_unit": c.calibration.rad_per_unit},
            }
            for i, c in enumerate(body.channels)
        ],
        "postures": sorted(body.postures),
    }


def hello(body: Body, *, updates_hz: float, **extra: Any) -> JsonObject:
    """A session's first line (without ``rt``)."""
    return {
        "v": SESSION_VERSION,
        "type": "hello",
        "updates_hz": updates_hz,
        "body": body_fields(body),
        **extra,
    }
