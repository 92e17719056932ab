"""The drivers' names (``driver.type``) and their makers, imported only when one is made.

Each name has its config section's dataclass in :mod:`anima.config.drivers`
(``SimDriverConfig``, ``SerialDriverConfig``, ``ReachyMiniDriverConfig``, joined as
``DriverConfig``): the loader picks the
dataclass by ``driver.type`` and refuses another driver's keys, so a name is checked when the
config loads. ``tests/drivers/test_sim.py`` holds the two lists equal.
"""

from __future__ import annotations

from anima.registry import Registry

DRIVERS = Registry(
    "driver.type",
    {
        "sim": "anima.drivers.makers:make_sim",
        "serial": "anima.drivers.makers:make_serial",
        "reachy_mini": "anima.drivers.makers:make_reachy_mini",
    },
)
