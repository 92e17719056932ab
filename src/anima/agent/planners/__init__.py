"""Planners: one protocol (:class:`~anima.agent.planners.base.Planner`), one explicit registry.

``PLANNERS`` (a :class:`~anima.registry.Registry`) names each ``agent.planner``'s maker, in
:mod:`anima.agent.planners.makers`; the HTTP planners are imported only when chosen (they need
the ``agent`` extra, httpx). The names are :class:`anima.choices.PlannerType`, checked when the
config loads.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from anima.agent.planners.base import APOLOGY, Planner, PlannerReply
from anima.choices import REALTIME_BRAINS
from anima.errors import ConfigError
from anima.registry import Registry

if TYPE_CHECKING:
    from anima.agent.actions import ActionRegistry
    from anima.config import AgentConfig
    from anima.events import Publisher

PLANNERS = Registry(
    "agent.planner.type",
    {
        "rules": "anima.agent.planners.makers:make_rules",
        "openai": "anima.agent.planners.makers:make_openai",
        "dify": "anima.agent.planners.makers:make_dify",
    },
)


def create_planner(
    config: AgentConfig,
    registry: ActionRegistry,
    events: Publisher | None = None,
    *,
    wake_phrase: str = "hey robot",
) -> Planner:
    """The planner ``config.planner`` names; ``events`` receives its error events.
    ``wake_phrase`` is the listener's (``listen.wake_phrase``): the rule planner ignores it in
    front of a command ("hey robot, wave")."""
    if config.planner.type in REALTIME_BRAINS:
        # a speech-to-speech session, not a planner of text: it replaces the whole conversation
        raise ConfigError(
            f"agent.planner.type {config.planner.type} is a realtime brain, not a text planner: "
            "anima.build attaches it in the conversation's place (docs/realtime.md)",
            key="agent.planner.type",
        )
    factory = PLANNERS.load(config.planner.type)
    planner: Planner = factory(config, registry, events, wake_phrase)
    return planner


__all__ = ["APOLOGY", "PLANNERS", "Planner", "PlannerReply", "create_planner"]
