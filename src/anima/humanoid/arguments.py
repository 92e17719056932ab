"""The client's arguments, checked before anything is sent: the robot's address from
``ip_config.json``, control-mode names, and values against their documented ranges."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from pathlib import Path

from anima.errors import ConfigError, InvalidCommandError, NonFiniteValueError
from anima.humanoid.spec import CONTROL_MODES, RL, TRADITIONAL, Range, quote

DEFAULT_IP, DEFAULT_PORT = "127.0.0.1", 6666
IP_CONFIG = "ip_config.json"  # the vendor's client configuration: {"ip": "...", "port": 6666}
CONTROL_NAMES: dict[str, int] = {"traditional": TRADITIONAL, "mpc": TRADITIONAL, "rl": RL}


def load_ip_config(path: str | Path) -> tuple[str, int]:
    """``(ip, port)`` from an ``ip_config.json``; ConfigError names the file and the key."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ConfigError(f"{path}: cannot read the ip config: {exc}") from exc
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: expected a JSON object with 'ip' and 'port'")
    ip, port = data.get("ip", DEFAULT_IP), data.get("port", DEFAULT_PORT)
    if not isinstance(ip, str) or not ip.strip():
        raise ConfigError(f"{path}: 'ip' must be a non-empty string, got {ip!r}")
    if isinstance(port, str) and port.strip().isdigit():
        port = int(port)
    if isinstance(port, bool) or not isinstance(port, int) or not 0 < port < 65536:
        raise ConfigError(f"{path}: 'port' must be a port number, got {port!r}")
    return ip.strip(), port


def control_mode_id(mode: int | str) -> int:
    """0/1, or "traditional"/"rl" (any case) → the domain id; InvalidCommandError otherwise."""
    if isinstance(mode, str):
        key = mode.strip().lower()
        if key in CONTROL_NAMES:
            return CONTROL_NAMES[key]
        if key.lstrip("-").isdigit() and len(key) <= 12:  # int() refuses > 4300 digits
            mode = int(key)
    if isinstance(mode, int) and not isinstance(mode, bool) and mode in CONTROL_MODES:
        return mode
    # quoted short: a typed 400-digit or 3 kB argument must not make a 3 kB answer
    if isinstance(mode, str):
        shown = quote(mode)
    else:  # str() of an int of more than 4300 digits raises
        shown = quote(str(mode))[1:-1] if mode.bit_length() < 14_000 else "a huge integer"
    raise InvalidCommandError(f"control mode must be traditional (0) or rl (1), got {shown}")


def check_ranges(values: Mapping[str, float], ranges: Mapping[str, Range]) -> None:
    for name, value in values.items():
        refusal = ranges[name].check(name, value)
        if refusal is not None:
            kind = InvalidCommandError if finite(value) else NonFiniteValueError
            raise kind(refusal)


def finite(value: float) -> bool:
    return math.isfinite(value)
