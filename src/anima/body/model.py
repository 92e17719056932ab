"""What a robot body is: channels with limits and roles, calibrations, named postures.

A *channel* is one actuator value in the robot's own units (Nadine: 0–255 per servo). Channels
are addressed by index (0-based inside anima; the board's numbering is 1-based) or by name.
The engine needs to know a few *roles* (lips, eyelids, eyes, neck) so it can drive them —
blink, lip-sync, gaze, head rotation — on any body whose definition names them.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

from anima.config.vision import CameraGeometry
from anima.errors import ConfigError, UnknownChannelError, UnknownPostureError

FloatArray = NDArray[np.float64]


class Role(enum.Enum):
    """What the engine knows a channel to be. ``OTHER`` channels are driven only by moves."""

    LIPS_OPEN = "lips.open"
    LIPS_WIDE = "lips.wide"
    LIPS_NARROW = "lips.narrow"
    EYELIDS = "eyelids"
    EYES_YAW = "eyes.yaw"
    EYES_PITCH = "eyes.pitch"
    NECK_YAW = "neck.yaw"
    NECK_PITCH = "neck.pitch"
    NECK_ROLL = "neck.roll"
    ANTENNA_RIGHT = "antenna.right"  # Reachy Mini's: speech moves them on a body without lips
    ANTENNA_LEFT = "antenna.left"
    OTHER = "other"


HEAD_ROLES = (Role.NECK_ROLL, Role.NECK_PITCH, Role.NECK_YAW)


@dataclass(frozen=True, kw_only=True)
class Calibration:
    """Maps channel units to radians: ``radians = (value - zero) * rad_per_unit``."""

    zero: float  # channel value at 0 rad
    rad_per_unit: float  # radians per channel unit; negative when the servo is mounted reversed

    def __post_init__(self) -> None:
        if not (math.isfinite(self.zero) and math.isfinite(self.rad_per_unit)):
            raise ConfigError(f"calibration values must be finite, got {self}")
        if self.rad_per_unit == 0.0:
            raise ConfigError("calibration rad_per_unit must not be 0")

    def to_radians(self, value: float) -> float:
        return (value - self.zero) * self.rad_per_unit

    def to_units(self, radians: float) -> float:
        return self.zero + radians / self.rad_per_unit


@dataclass(frozen=True, kw_only=True)
class Channel:
    """One actuator: its name, rest value, hard range, role and speed limit (all in its units)."""

    name: str  # unique within the body; used by animations, postures and commands
    default: float  # rest value; the body starts here
    min: float  # lowest value ever sent
    max: float  # highest value ever sent
    role: Role = Role.OTHER  # what the engine may use the channel for
    max_speed: float | None = None  # units per second; None = the body's default speed limit
    calibration: Calibration | None = None  # units ↔ radians, for head and eye channels
    closed: float | None = None  # eyelids only: the value that closes the eyes (default: min)

    def __post_init__(self) -> None:
        for label, v in (("default", self.default), ("min", self.min), ("max", self.max)):
            if not math.isfinite(v):
                raise ConfigError(f"channel {self.name!r}: {label} must be finite, got {v!r}")
        if self.min > self.max:
            raise ConfigError(f"channel {self.name!r}: min {self.min} > max {self.max}")
        if not self.min <= self.default <= self.max:
            raise ConfigError(
                f"channel {self.name!r}: default {self.default} outside [{self.min}, {self.max}]"
            )
        if self.max_speed is not None and not (
            math.isfinite(self.max_speed) and self.max_speed > 0
        ):
            raise ConfigError(
                f"channel {self.name!r}: max_speed must be > 0, got {self.max_speed!r}"
            )
        if self.closed is not None and not self.min <= self.closed <= self.max:
            raise ConfigError(f"channel {self.name!r}: closed {self.closed} outside its range")


@dataclass(frozen=True, kw_only=True)
class Posture:
    """A named, possibly partial, frame: channel name → value."""

    name: str
    values: Mapping[str, float]


@dataclass(frozen=True, kw_only=True)
class LipWidthRule:
    """Nadine's forbidden combination: both lip-width channels active at once.

    The lip mechanism cannot pull wide and narrow together. When both exceed their
    ``threshold`` above rest, the mouth is closed instead (open, wide, narrow → rest).
    """

    open: int  # channel index of lips.open
    wide: int  # channel index of lips.wide
    narrow: int  # channel index of lips.narrow
    wide_active: float  # value above which lips.wide counts as active
    narrow_active: float  # value above which lips.narrow counts as active

    def violated(self, frame: FloatArray) -> bool:
        wide: float = frame.item(self.wide)
        narrow: float = frame.item(self.narrow)
        return wide > self.wide_active and narrow > self.narrow_active


@dataclass(frozen=True, kw_only=True)
class BoardInfo:
    """Wire facts of the servo board the body was defined for (used by the serial driver)."""

    port: str = ""  # serial device, e.g. /dev/ttyUSB0; empty when the body has no board
    baud: int = 115200  # serial bit rate


@dataclass(frozen=True)
class Body:
    """A robot body: ordered channels, postures, calibrations and forbidden combinations."""

    channels: tuple[Channel, ...]
    postures: Mapping[str, Posture] = field(default_factory=dict)
    default_max_speed: float = 600.0  # units/s for channels without their own max_speed
    lip_active_fraction: float = 0.15  # of a lip-width channel's range above rest = "active"
    board: BoardInfo = field(default_factory=BoardInfo)
    source: str = "<code>"  # where the definition came from, for messages
    name: str = "nadine"  # what the robot is ([body] name; else the file's name)
    animations: str = "nadine"  # the shipped animation set made for it ([body] animations)
    camera: CameraGeometry | None = None  # its own camera ([camera]); None: it declares none
    _index: dict[str, int] = field(init=False, repr=False, compare=False)
    _roles: dict[Role, int] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not self.channels:
            raise ConfigError(f"{self.source}: a body needs at least one channel")
        names: dict[str, int] = {}
        for i, ch in enumerate(self.channels):
            if ch.name in names:
                raise ConfigError(f"{self.source}: duplicate channel name {ch.name!r}")
            names[ch.name] = i
        object.__setattr__(self, "_index", names)
        roles: dict[Role, int] = {}
        for i, ch in enumerate(self.channels):
            if ch.role is Role.OTHER:
                continue
            if ch.role in roles:
                raise ConfigError(
                    f"{self.source}: role {ch.role.value!r} given to both "
                    f"{self.channels[roles[ch.role]].name!r} and {ch.name!r}"
                )
            roles[ch.role] = i
        object.__setattr__(self, "_roles", roles)
        for role in HEAD_ROLES:
            if role in roles and self.channels[roles[role]].calibration is None:
                raise ConfigError(
                    f"{self.source}: head channel {self.channels[roles[role]].name!r} "
                    "needs a calibration (zero, rad_per_unit)"
                )
        for p in self.postures.values():
            for name, value in p.values.items():
                ch = self.channel(name)
                if not ch.min <= value <= ch.max:
                    raise ConfigError(
                        f"{self.source}: posture {p.name!r} sets {name}={value}, "
                        f"outside [{ch.min}, {ch.max}]"
                    )
        rule = self.lip_rule
        if rule is not None and rule.violated(self.defaults()):
            raise ConfigError(
                f"{self.source}: the default frame has both lip-width channels active"
            )

    # --- lookup ---------------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self.channels)

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(ch.name for ch in self.channels)

    def index(self, channel: str | int) -> int:
        """The 0-based index of a channel given by name or index."""
        if isinstance(channel, int):
            if 0 <= channel < len(self.channels):
                return channel
            raise UnknownChannelError(
                f"channel index {channel} out of range 0..{len(self.channels) - 1}"
            )
        try:
            return self._index[channel]
        except KeyError:
            raise UnknownChannelError(f"unknown channel {channel!r}") from None

    def indices(self, channels: Iterable[str | int]) -> NDArray[np.intp]:
        return np.array([self.index(c) for c in channels], dtype=np.intp)

    def channel(self, channel: str | int) -> Channel:
        return self.channels[self.index(channel)]

    def role_index(self, role: Role) -> int | None:
        """The index of the channel with this role, or None when the body has none."""
        return self._roles.get(role)

    def posture(self, name: str) -> Posture:
        try:
            return self.postures[name]
        except KeyError:
            known = ", ".join(sorted(self.postures)) or "none"
            raise UnknownPostureError(f"unknown posture {name!r} (known: {known})") from None

    # --- derived arrays ---------------------------------------------------------------------
    def defaults(self) -> FloatArray:
        return np.array([ch.default for ch in self.channels], dtype=np.float64)

    def lower(self) -> FloatArray:
        return np.array([ch.min for ch in self.channels], dtype=np.float64)

    def upper(self) -> FloatArray:
        return np.array([ch.max for ch in self.channels], dtype=np.float64)

    def max_speeds(self) -> FloatArray:
        return np.array(
            [ch.max_speed or self.default_max_speed for ch in self.channels], dtype=np.float64
        )

    @property
    def lip_rule(self) -> LipWidthRule | None:
        o, w, n = (self.role_index(r) for r in (Role.LIPS_OPEN, Role.LIPS_WIDE, Role.LIPS_NARROW))
        if o is None or w is None or n is None:
            return None
        cw, cn = self.channels[w], self.channels[n]
        f = self.lip_active_fraction
        return LipWidthRule(
            open=o,
            wide=w,
            narrow=n,
            wide_active=cw.default + f * (cw.max - cw.default),
            narrow_active=cn.default + f * (cn.max - cn.default),
        )
