"""The agent: the robot's vocabulary of actions, validated plans, their executor, planners.

- :mod:`~anima.agent.actions`: ``@action`` and :class:`ActionRegistry`;
- :mod:`~anima.agent.vocabulary`: which actions a robot gets (built-ins, humanoid, the user's);
- :mod:`~anima.agent.plan`: action strings parsed with ``ast`` and validated as a whole;
- :mod:`~anima.agent.executor`: one cancellable task per plan, statuses and feedback;
- :mod:`~anima.agent.process`: external programs killed as a process group;
- :mod:`~anima.agent.planners`: the rule planner, OpenAI-compatible servers, Dify.
"""

from anima.agent.actions import Action, ActionRegistry, ActionResult, action
from anima.agent.context import ActionContext
from anima.agent.executor import Executor, PlanResult, PlanTask, StepResult
from anima.agent.phrases import Phrase
from anima.agent.plan import Plan, Step, parse_plan
from anima.agent.vocabulary import builtin_registry, load_user_actions, robot_registry
from anima.events import StepStatus

__all__ = [
    "Action",
    "ActionContext",
    "ActionRegistry",
    "ActionResult",
    "Executor",
    "Phrase",
    "Plan",
    "PlanResult",
    "PlanTask",
    "Step",
    "StepResult",
    "StepStatus",
    "action",
    "builtin_registry",
    "load_user_actions",
    "parse_plan",
    "robot_registry",
]
