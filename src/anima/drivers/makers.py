"""What makes each driver from its config section (named in :data:`anima.drivers.registry.
DRIVERS`). Optional drivers import their dependencies here, so a missing extra fails only when
that driver is chosen."""

from __future__ import annotations

from anima.body import Body
from anima.config import ReachyMiniDriverConfig, SerialDriverConfig, SimDriverConfig
from anima.drivers.base import Driver
from anima.drivers.sim import SimDriver


def make_sim(config: SimDriverConfig, body: Body) -> Driver:
    return SimDriver(history=config.history, record=config.record, body=body)


def make_serial(config: SerialDriverConfig, body: Body) -> Driver:
    from anima.drivers.serial_servo import SerialServoDriver  # pyserial loads on connect()

    return SerialServoDriver.from_config(config, body)


def make_reachy_mini(config: ReachyMiniDriverConfig, body: Body) -> Driver:
    from anima.drivers.reachy_mini import ReachyLink, ReachyMiniDriver  # no SDK import yet

    def link() -> ReachyLink:  # on connect(), and on each reconnect
        if config.link == "sdk":
            from anima.drivers.reachy_link import SdkLink

            return SdkLink(config.host, config.port, timeout_s=config.timeout_s)
        from anima.drivers.reachy_ws import WebSocketLink

        return WebSocketLink(config.host, config.port, timeout_s=config.timeout_s)

    return ReachyMiniDriver(
        body,
        link,
        rate_hz=config.rate_hz,
        reconnect_s=config.reconnect_s,
        where=f"the Reachy Mini daemon at {config.host}:{config.port}",
    )
