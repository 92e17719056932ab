"""The MCP tools: every action of the robot's registry, ``run_plan``, and the three stops.

An action's tool has the registry's JSON schema (types, enums from its choices — the animations
the library really has —, ``minimum``/``maximum`` from its bounds, descriptions from its
docstring), kept compact: every client sends the whole list with each request to its model.
``mcp.allow`` and ``mcp.deny`` narrow the actions; ``stop``, ``emergency_stop`` and
``reset_emergency_stop`` are always there (:data:`anima.config.mcp.ALWAYS`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from anima.agent.actions import Action, ActionRegistry
from anima.agent.plan import MAX_STEPS
from anima.config.mcp import ALWAYS, McpConfig
from anima.wire.jsontypes import JsonDict, JsonObject

RUN_PLAN = "run_plan"
# actions of the conversation, not of the robot: no tool
CONVERSATION_ONLY = frozenset({"finish"})
NO_ARGS: JsonObject = {"type": "object", "properties": {}}


@dataclass(frozen=True)
class Tool:
    """One MCP tool: its name, what it does, and its arguments' JSON schema."""

    name: str
    description: str
    input_schema: JsonObject
    control: bool = False  # a stop tool: always there, never rate-limited, never queued

    def size(self) -> int:
        """Characters of this tool as ``tools/list`` sends it (what a model's context holds)."""
        listed = {
            "name": self.name,
            "description": self.description,
            "inputSchema": self.input_schema,
        }
        return len(json.dumps(listed, separators=(",", ":")))


CONTROLS = (
    Tool(
        "stop",
        "Stop: cancel the running tool call or plan; the motion eases to a hold and speech "
        "stops. Moves and speech are accepted again at once.",
        NO_ARGS,
        control=True,
    ),
    Tool(
        "emergency_stop",
        "Emergency stop: hold all motion and silence speech now; every move and speech is "
        "refused until reset_emergency_stop.",
        NO_ARGS,
        control=True,
    ),
    Tool(
        "reset_emergency_stop",
        "Release the emergency stop: moves and speech are accepted again.",
        NO_ARGS,
        control=True,
    ),
)
assert tuple(t.name for t in CONTROLS) == ALWAYS


def allowed(name: str, config: McpConfig) -> bool:
    """Whether ``mcp.allow``/``mcp.deny`` let ``name`` be a tool (the stops always are)."""
    if name in ALWAYS:
        return True
    if name in config.deny:
        return False
    return not config.allow or name in config.allow


def action_tool(action: Action) -> Tool:
    """An action as a tool: its summary, and its parameters' schema without the noise."""
    schema: JsonDict = {
        "type": "object",
        "properties": {p.name: p.schema() for p in action.params},
    }
    required = [p.name for p in action.params if p.required]
    if required:
        schema["required"] = required
    schema["additionalProperties"] = False
    return Tool(action.name, action.summary, schema)


def run_plan_tool(actions: list[str]) -> Tool:
    """``run_plan``: a whole list of actions, validated before the first one moves."""
    step: JsonObject = {
        "type": "object",
        "properties": {
            "action": {"type": "string", "enum": actions},
            "args": {"type": "object", "description": "the action's arguments, by name"},
        },
        "required": ["action"],
    }
    schema: JsonObject = {
        "type": "object",
        "properties": {
            "actions": {
                "type": "array",
                "items": step,
                "minItems": 1,
                "maxItems": MAX_STEPS,
                "description": "the steps in order, each an action with its arguments",
            }
        },
        "required": ["actions"],
    }
    return Tool(
        RUN_PLAN,
        "Run several actions in order as one plan (say, then nod, then wave). The whole "
        "plan is checked first: one bad step and nothing moves. Returns each step's status.",
        schema,
    )


def build_tools(registry: ActionRegistry, config: McpConfig) -> list[Tool]:
    """The tools a client sees: the allowed actions, ``run_plan`` over them, the stops."""
    actions = [
        a
        for a in registry
        if a.name not in CONVERSATION_ONLY and a.name not in ALWAYS and allowed(a.name, config)
    ]
    tools = [action_tool(a) for a in actions]
    if actions and allowed(RUN_PLAN, config):
        tools.append(run_plan_tool([a.name for a in actions]))
    return [*tools, *CONTROLS]


def tools_size(tools: list[Tool]) -> int:
    """Characters of the whole ``tools/list`` answer's tools (compact JSON)."""
    return sum(t.size() for t in tools) + len(tools) + 1
