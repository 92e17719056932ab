"""The bounds config values are checked against, each refusal naming ``section.key``.

A value past its bound is a typo, not a wish (a blend of 1e300 s, a window of 10**10 ticks):
it is refused in one line, and an absurd integer is named by its size, not printed.
"""

from __future__ import annotations

import math

from anima.errors import ConfigError

ENV_PREFIX = "ANIMA_"  # the environment variables read as config keys start with this


def positive(section: str, **values: float) -> None:
    """Finite numbers > 0."""
    for key, value in values.items():
        if not (math.isfinite(value) and value > 0):
            raise ConfigError(
                f"{section}.{key} must be a finite number > 0, got {value!r}",
                key=f"{section}.{key}",
            )


def seconds(section: str, longest: float, *, shortest: float = 0.0, **values: float) -> None:
    """Durations: finite, > 0 and at most ``longest`` seconds (past it, a typo, not a wish);
    at least ``shortest``, when given."""
    positive(section, **values)
    for key, value in values.items():
        if shortest and value < shortest:
            raise ConfigError(
                f"{section}.{key} must be in [{shortest:g}, {longest:g}] s, got {value:g}",
                key=f"{section}.{key}",
            )
        if value > longest:
            raise ConfigError(
                f"{section}.{key} must be ≤ {longest:g} s, got {value:g}", key=f"{section}.{key}"
            )


def rate(section: str, highest: float, *, lowest: float = 0.0, **values: float) -> None:
    """Rates: finite, > 0 and at most ``highest`` Hz; at least ``lowest``, when given (at
    ``humanoid.state_hz: 1e-300`` its reader's wait of one period overflowed and the thread
    died; the MQTT state was never published)."""
    positive(section, **values)
    for key, value in values.items():
        if lowest and value < lowest:
            raise ConfigError(
                f"{section}.{key} must be in [{lowest:g}, {highest:g}] Hz, got {value:g}",
                key=f"{section}.{key}",
            )
        if value > highest:
            raise ConfigError(
                f"{section}.{key} must be ≤ {highest:g} Hz, got {value:g}", key=f"{section}.{key}"
            )


def secret(section: str, **values: str | None) -> None:
    """Tokens and the like: None, or text that is not blank, with no space at its ends and no
    control character (a token of one space passed for one; a header carries none of these)."""
    for key, value in values.items():
        if value is None:
            continue
        if not value.strip():
            raise ConfigError(
                f"{section}.{key} must not be blank, got {value[:20]!r}", key=f"{section}.{key}"
            )
        if value != value.strip() or not value.isprintable():
            raise ConfigError(
                f"{section}.{key} must have no space at its ends and no control character "
                "(it is sent in an HTTP header as it is)",
                key=f"{section}.{key}",
            )


def count(section: str, lo: int, hi: int, **values: int) -> None:
    """Integers within [lo, hi]."""
    for key, value in values.items():
        if not lo <= value <= hi:
            shown = value if abs(value) < 10**30 else f"an integer of {value.bit_length()} bits"
            raise ConfigError(
                f"{section}.{key} must be in [{lo}, {hi}], got {shown}", key=f"{section}.{key}"
            )
