"""Robot drivers behind one small protocol, and the registry that builds them from config.

:data:`~anima.drivers.registry.DRIVERS` maps a ``driver.type`` to its maker
(:mod:`anima.drivers.makers`), imported when that driver is made.
"""

from __future__ import annotations

from anima.body import Body
from anima.config import DriverConfig
from anima.drivers.base import Driver, Frame
from anima.drivers.registry import DRIVERS
from anima.drivers.sim import SimDriver


def create_driver(config: DriverConfig, body: Body) -> Driver:
    """The driver ``config`` describes (a ConfigError naming the known types otherwise)."""
    maker = DRIVERS.load(config.type)
    driver: Driver = maker(config, body)
    return driver


__all__ = ["DRIVERS", "Driver", "Frame", "SimDriver", "create_driver"]
