"""What makes each planner (named in :data:`anima.agent.planners.PLANNERS`): (agent config,
the action registry, where its error events go, the listener's wake phrase) → planner."""

from __future__ import annotations

from typing import TYPE_CHECKING

from anima.agent.planners.base import Planner

if TYPE_CHECKING:
    from anima.agent.actions import ActionRegistry
    from anima.config import AgentConfig
    from anima.events import Publisher


def make_rules(
    config: AgentConfig, registry: ActionRegistry, events: Publisher | None, wake_phrase: str
) -> Planner:
    from anima.agent.planners.rules import RulePlanner

    return RulePlanner(registry, wake_phrase=wake_phrase, name=config.name)


def make_openai(
    config: AgentConfig, registry: ActionRegistry, events: Publisher | None, wake_phrase: str
) -> Planner:
    from anima.agent.planners.openai import OpenAIPlanner
    from anima.config import OpenAIPlannerConfig

    settings = config.planner
    assert isinstance(settings, OpenAIPlannerConfig)  # PLANNERS is looked up by its type
    return OpenAIPlanner.from_config(
        settings, registry, instructions=config.instructions, events=events
    )


def make_dify(
    config: AgentConfig, registry: ActionRegistry, events: Publisher | None, wake_phrase: str
) -> Planner:
    from anima.agent.planners.dify import DifyPlanner
    from anima.config import DifyPlannerConfig

    settings = config.planner
    assert isinstance(settings, DifyPlannerConfig)  # PLANNERS is looked up by its type
    return DifyPlanner.from_config(settings, events)
