"""Costly commands over MQTT, rate-limited per door: ``ask`` starts an LLM request.

Anyone who can publish on the broker can send ``ask``; 200 in 10 s made 50 LLM requests (the
planner's queue let through what it could). Each costly leaf has a token bucket: ``burst`` at
once, then ``rate_per_s``; what comes beyond is refused on the error topic with a reason naming
the limit, before it reaches the runtime. Cheap commands (gestures, gaze, speech, estop) are
not limited here: the dispatcher coalesces floods of them (``frontdoors/dispatch.py``).

Pure logic on an injected clock; the door calls it from paho's thread.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class Limit:
    burst: int  # requests at once
    rate_per_s: float  # then this many a second


# a person asks every few seconds; an LLM request takes about a second or more
LIMITS = {"ask": Limit(burst=5, rate_per_s=0.5)}


class CostlyLimiter:
    """One token bucket per costly control leaf."""

    def __init__(
        self, limits: dict[str, Limit] | None = None, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.limits = dict(LIMITS if limits is None else limits)
        self._clock = clock
        now = clock()
        self._tokens = {leaf: (float(lim.burst), now) for leaf, lim in self.limits.items()}
        self.refused = 0

    def refusal(self, leaf: str) -> str | None:
        """Why a command on ``control/<leaf>`` arriving now is refused, or None (taken)."""
        limit = self.limits.get(leaf)
        if limit is None:
            return None
        tokens, at = self._tokens[leaf]
        now = self._clock()
        tokens = min(float(limit.burst), tokens + (now - at) * limit.rate_per_s)
        if tokens < 1.0:
            self._tokens[leaf] = (tokens, now)
            self.refused += 1
            return (
                f"refused: too many {leaf} requests (at most {limit.burst} at once, then "
                f"{limit.rate_per_s:g} a second on MQTT); send it again later"
            )
        self._tokens[leaf] = (tokens - 1.0, now)
        return None
