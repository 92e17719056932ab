"""``driver:``: one dataclass per driver ``type`` (anima.drivers.registry.DRIVERS), joined as
``DriverConfig``; the loader picks by ``type`` and refuses another type's keys by name."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from anima.config.bounds import count, rate, seconds
from anima.errors import ConfigError


@dataclass(frozen=True, kw_only=True)
class SimDriverConfig:
    """``driver.type: sim``: the simulated robot (the default)."""

    type: Literal["sim"] = "sim"
    record: str | None = None  # write every sent frame to this JSON Lines file
    history: int = 1000  # frames kept in memory, 1–1,000,000

    def __post_init__(self) -> None:
        # frames are kept in memory (~300 bytes each): 1 M is ~300 MB, 2.8 h at 100 Hz
        count("driver", 1, 1_000_000, history=self.history)


@dataclass(frozen=True, kw_only=True)
class SerialDriverConfig:
    """``driver.type: serial``: the servo board on a serial port (docs/serial-protocol.md)."""

    type: Literal["serial"] = "serial"
    port: str | None = None  # device path; None = the body's checker.ini [board] port
    baud: int | None = None  # bit rate; None = the body's checker.ini [board] baud
    write_timeout_s: float = 0.002  # a write may hold the tick at most this long
    reconnect_s: tuple[float, float] = (0.25, 2.0)  # first and longest retry delay

    def __post_init__(self) -> None:
        if self.baud is not None:
            count("driver", 1, 12_000_000, baud=self.baud)  # past the fastest USB adapters
        # the write runs inside the tick: longer than a tick would stall the loop by design
        seconds("driver", 0.1, write_timeout_s=self.write_timeout_s)
        lo, hi = self.reconnect_s
        if not (0 < lo <= hi <= 3600):
            raise ConfigError(
                f"driver.reconnect_s must be 0 < first ≤ longest ≤ 3600 s, got {lo:g}, {hi:g}",
                key="driver.reconnect_s",
            )


# the ``driver`` section: one dataclass per ``driver.type`` (anima.drivers.registry.DRIVERS
# makes each); the loader picks it by ``type`` and refuses another type's keys
@dataclass(frozen=True, kw_only=True)
class ReachyMiniDriverConfig:
    """``driver.type: reachy_mini``: a Reachy Mini through Pollen's SDK and daemon
    (docs/reachy-mini.md); needs the Reachy Mini body (body.checker_ini: reachy_mini)."""

    type: Literal["reachy_mini"] = "reachy_mini"
    # websocket: the daemon's own protocol, no SDK needed; sdk: Pollen's ReachyMini client
    # (installed by hand: docs/reachy-mini.md)
    link: Literal["websocket", "sdk"] = "websocket"
    host: str = "localhost"  # the daemon: localhost on the robot, else the robot's name
    port: int = 8000  # the daemon's port (reachy-mini-daemon --fastapi-port)
    rate_hz: float = 50.0  # targets a second: the daemon's own rate; faster floods it
    timeout_s: float = 5.0  # connecting to the daemon, at most
    reconnect_s: tuple[float, float] = (0.5, 5.0)  # first and longest retry delay

    def __post_init__(self) -> None:
        if not self.host.strip():
            raise ConfigError("driver.host must name the daemon's host", key="driver.host")
        if not 0 < self.port < 65536:
            raise ConfigError(f"driver.port out of range: {self.port}", key="driver.port")
        rate("driver", 100, lowest=1, rate_hz=self.rate_hz)  # under 1 Hz the head jumps
        seconds("driver", 60, timeout_s=self.timeout_s)
        lo, hi = self.reconnect_s
        if not (0 < lo <= hi <= 3600):
            raise ConfigError(
                f"driver.reconnect_s must be 0 < first ≤ longest ≤ 3600 s, got {lo:g}, {hi:g}"
            )


DriverConfig = SimDriverConfig | SerialDriverConfig | ReachyMiniDriverConfig
