"""When each turn was planned: what the conversation notes for the benchmarks.

:class:`TurnTiming` is what the conversation notes of each turn for ``anima bench
conversation``'s stage breakdown (final transcript → the planner's answer); the listener's and
the speech service's moments come from their own events and the sink. How fast an interrupt
holds the motion is measured by :mod:`anima.bench.agent.interrupt`.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, kw_only=True)
class TurnTiming:
    """One turn's agent-side moments (engine clock seconds)."""

    heard_t: float  # the final transcript's own time (its Transcript event's ``t``)
    planned_t: float  # the planner answered (a streamed reply: its first plan or words)
