"""Planners: one protocol (:class:`~anima.agent.planners.base.Planner`), one explicit registry.

``PLANNERS`` maps the config's ``agent.planner`` string to a factory; the HTTP planners are
imported only when chosen (they need the ``agent`` extra, httpx).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from anima.agent.planners.base import APOLOGY, Planner, PlannerReply
from anima.errors import ConfigError

if TYPE_CHECKING:
    from anima.agent.actions import ActionRegistry
    from anima.config import AgentConfig
    from anima.events import EventHub

PlannerFactory = Callable[["AgentConfig", "ActionRegistry", "EventHub | None"], Planner]


def _rules(config: AgentConfig, registry: ActionRegistry, events: EventHub | None) -> Planner:
    from anima.agent.planners.rules import RulePlanner

    return RulePlanner(registry, wake_phrase=config.wake_phrase)


def _openai(config: AgentConfig, registry: ActionRegistry, events: EventHub | None) -> Planner:
    from anima.agent.planners.openai import OpenAIPlanner

    return OpenAIPlanner.from_config(config, registry, events)


def _dify(config: AgentConfig, registry: ActionRegistry, events: EventHub | None) -> Planner:
    from anima.agent.planners.dify import DifyPlanner

    return DifyPlanner.from_config(config, events)


PLANNERS: dict[str, PlannerFactory] = {"rules": _rules, "openai": _openai, "dify": _dify}


def create_planner(
    config: AgentConfig, registry: ActionRegistry, events: EventHub | None = None
) -> Planner:
    """The planner ``config.planner`` names; ``events`` receives its error events."""
    try:
        factory = PLANNERS[config.planner]
    except KeyError:
        known = ", ".join(sorted(PLANNERS))
        raise ConfigError(f"agent.planner: unknown planner {config.planner!r} ({known})") from None
    return factory(config, registry, events)


__all__ = ["APOLOGY", "PLANNERS", "Planner", "PlannerReply", "create_planner"]
