"""The session's tools are the action registry: each action a Realtime function tool with the
schema ``anima mcp tools`` shows (:meth:`~anima.agent.actions.Action.parameters_schema`), and
each finished call a validated plan of one step run by the agent's executor.

A call's outcome is the text the model reads in its ``function_call_output``: the executor's
summary (``Robot feedback: Execution [...] completed``, ``Robot feedback: Failed to execute
[...], error: …``, ``… INTERRUPTED …``), the words the text planners read, or ``refused: …``
with the reason when the call is not a valid plan, so the model can tell the person what
happened instead of pretending it moved.
"""

from __future__ import annotations

import json
import logging
import time

from anima.agent.actions import Action, ActionRegistry
from anima.agent.executor import Executor
from anima.agent.plan import Plan, step_from_values
from anima.errors import AnimaError
from anima.wire.jsontypes import JsonObject

log = logging.getLogger(__name__)

# actions of the text conversation, not of the robot: no tool (finish() resets a planner)
CONVERSATION_ONLY = frozenset({"finish"})
MAX_ARGUMENTS_CHARS = 20_000  # a call's arguments: a plan of one step fits in far less
RUN_TIMEOUT_S = 120.0  # a call's plan is canceled after this (a walk, a long wait)


def robot_actions(registry: ActionRegistry) -> list[Action]:
    """The registry's actions a realtime model may call (each brain's tools are these)."""
    return [a for a in registry if a.name not in CONVERSATION_ONLY]


def realtime_tools(registry: ActionRegistry) -> list[JsonObject]:
    """Every robot action as a Realtime ``function`` tool (flat: name at the top level)."""
    return [
        {
            "type": "function",
            "name": a.name,
            "description": a.summary,
            "parameters": a.parameters_schema(),
        }
        for a in robot_actions(registry)
    ]


def run_call(registry: ActionRegistry, executor: Executor, name: str, arguments: object) -> str:
    """Validate the call ``name(arguments)`` as a plan of one step, run it, and say how it
    went (the ``output`` the model reads). ``arguments``: JSON text (OpenAI sends a string)
    or the decoded object (Gemini's ``args``). Never raises for what the model sent."""
    action = registry.get(name) if name not in CONVERSATION_ONLY else None
    if action is None:
        return f"refused: unknown tool {name[:60]!r}"
    values = arguments
    if isinstance(arguments, str):
        if len(arguments) > MAX_ARGUMENTS_CHARS:
            return f"refused: arguments of {len(arguments)} characters"
        try:
            values = json.loads(arguments or "{}")
        except (json.JSONDecodeError, RecursionError):
            return "refused: the arguments are not JSON"
    if not isinstance(values, dict):
        return "refused: the arguments must be a JSON object"
    try:
        plan = Plan(steps=(step_from_values(action, values),))
        result = executor.run(plan, timeout=RUN_TIMEOUT_S)
    except AnimaError as exc:
        return f"refused: {exc}"
    # the executor's summary, in the words the text planners read (None: nothing to report)
    return result.feedback or f"done: {', '.join(plan.texts)}"


def call_output(registry: ActionRegistry, executor: Executor, name: str, arguments: object) -> str:
    """:func:`run_call`, timed and logged; a bug of ours is told to the model as ``failed: …``
    and the session goes on."""
    t0 = time.monotonic()
    try:
        output = run_call(registry, executor, name, arguments)
    except Exception as exc:
        log.exception("realtime: tool call %s raised", name[:60])
        output = f"failed: {type(exc).__name__}"
    ms = 1e3 * (time.monotonic() - t0)
    log.info("realtime: %s → %s (%.0f ms)", name[:60], output[:200], ms)
    return output
