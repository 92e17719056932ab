"""What makes each driver from its config section (named in :data:`anima.drivers.registry.
DRIVERS`). Optional drivers import their dependencies here, so a missing extra fails only when
that driver is chosen."""

from __future__ import annotations

from anima.body import Body
from anima.config import SerialDriverConfig, SimDriverConfig
from anima.drivers.base import Driver
from anima.drivers.sim import SimDriver


def make_sim(config: SimDriverConfig, body: Body) -> Driver:
    return SimDriver(history=config.history, record=config.record, body=body)


def make_serial(config: SerialDriverConfig, body: Body) -> Driver:
    from anima.drivers.serial_servo import SerialServoDriver  # pyserial loads on connect()

    return SerialServoDriver.from_config(config, body)
