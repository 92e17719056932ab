"""Robot drivers behind one small protocol, and the registry that builds them from config.

``DRIVERS`` maps a config ``type`` string to a factory. Optional drivers import their
dependencies inside the factory, so a missing extra fails only when that driver is chosen.
"""

from __future__ import annotations

from collections.abc import Callable

from anima.body import Body
from anima.config import DriverConfig
from anima.drivers.base import Driver, Frame
from anima.drivers.sim import SimDriver
from anima.errors import ConfigError

DriverFactory = Callable[[DriverConfig, Body], Driver]


def _sim(config: DriverConfig, body: Body) -> Driver:
    return SimDriver(history=config.history, record=config.record, body=body)


def _serial(config: DriverConfig, body: Body) -> Driver:
    from anima.drivers.serial_servo import SerialServoDriver  # pyserial loads on connect()

    return SerialServoDriver.from_config(config, body)


DRIVERS: dict[str, DriverFactory] = {"sim": _sim, "serial": _serial}


def create_driver(config: DriverConfig, body: Body) -> Driver:
    try:
        factory = DRIVERS[config.type]
    except KeyError:
        raise ConfigError(
            f"driver.type: unknown driver {config.type!r} (known: {', '.join(sorted(DRIVERS))})"
        ) from None
    return factory(config, body)


__all__ = ["DRIVERS", "Driver", "Frame", "SimDriver", "create_driver"]
