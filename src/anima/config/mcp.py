"""``mcp:``: what AI agents may do through the Model Context Protocol (docs/mcp.md).

The tools are the action registry's (the same validation as the agent's plans), narrowed by
``allow`` and ``deny``; ``stop``, ``emergency_stop`` and ``reset_emergency_stop`` are always
there and never rate-limited.
"""

from __future__ import annotations

from dataclasses import dataclass

from anima.config.bounds import count, rate, seconds
from anima.errors import ConfigError

ALWAYS = ("stop", "emergency_stop", "reset_emergency_stop")  # tools no list can take away


@dataclass(frozen=True, kw_only=True)
class McpConfig:
    http: bool = True  # serve MCP at /mcp on the dashboard's port (its loopback/token rules)
    allow: tuple[str, ...] = ()  # only these tools (action names, run_plan); empty: all
    deny: tuple[str, ...] = ()  # never these tools
    rate_per_s: float = 5.0  # tool calls per second, sustained (the stop tools are exempt)
    burst: int = 10  # tool calls at once before the rate applies
    call_timeout_s: float = 300.0  # a call still running after this is cancelled
    events_kept: int = 200  # recent events the event log resource holds
    state_hz: float = 2.0  # how often a subscribed client may hear the state changed

    def __post_init__(self) -> None:
        for key, names in (("allow", self.allow), ("deny", self.deny)):
            for name in names:
                if not name.isidentifier():
                    raise ConfigError(
                        f"mcp.{key}: {name[:60]!r} is not a tool name", key=f"mcp.{key}"
                    )
        denied = sorted(set(self.deny) & set(ALWAYS))
        if denied:
            raise ConfigError(
                f"mcp.deny: {', '.join(denied)} cannot be denied: a client can always stop",
                key="mcp.deny",
            )
        rate("mcp", 1000, rate_per_s=self.rate_per_s)
        count("mcp", 1, 1000, burst=self.burst)
        seconds("mcp", 86_400, call_timeout_s=self.call_timeout_s)
        count("mcp", 1, 100_000, events_kept=self.events_kept)
        rate("mcp", 50, lowest=0.1, state_hz=self.state_hz)
