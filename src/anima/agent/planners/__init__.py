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
    from anima.events import Publisher

# (agent config, registry, error events, the listener's wake phrase) → planner
PlannerFactory = Callable[["AgentConfig", "ActionRegistry", "Publisher | None", str], Planner]


def _rules(
    config: AgentConfig, registry: ActionRegistry, events: Publisher | None, wake_phrase: str
) -> Planner:
    from anima.agent.planners.rules import RulePlanner

    return RulePlanner(registry, wake_phrase=wake_phrase, name=config.name)


def _openai(
    config: AgentConfig, registry: ActionRegistry, events: Publisher | None, wake_phrase: str
) -> Planner:
    from anima.agent.planners.openai import OpenAIPlanner

    return OpenAIPlanner.from_config(config, registry, events)


def _dify(
    config: AgentConfig, registry: ActionRegistry, events: Publisher | None, wake_phrase: str
) -> Planner:
    from anima.agent.planners.dify import DifyPlanner

    return DifyPlanner.from_config(config, events)


PLANNERS: dict[str, PlannerFactory] = {"rules": _rules, "openai": _openai, "dify": _dify}


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
    try:
        factory = PLANNERS[config.planner]
    except KeyError:
        known = ", ".join(sorted(PLANNERS))
        raise ConfigError(f"agent.planner: unknown planner {config.planner!r} ({known})") from None
    return factory(config, registry, events, wake_phrase)


__all__ = ["APOLOGY", "PLANNERS", "Planner", "PlannerReply", "create_planner"]
