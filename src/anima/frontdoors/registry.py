"""The front doors a config can open, each by its section's ``enabled`` (``mqtt.enabled``,
``web.enabled``), and what attaches each to a runtime (imported only when that door opens).

:func:`anima.build.build` opens them in this order; a door's ``attach(runtime, report)`` adds
its parts (an owned broker before the MQTT door that uses it) and says one line about it.
"""

from __future__ import annotations

from anima.registry import Registry

DOORS = Registry(
    "front door",
    {
        "mqtt": "anima.frontdoors.attach:attach_mqtt",
        "web": "anima.frontdoors.attach:attach_web",
    },
)
