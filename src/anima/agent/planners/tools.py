"""The registry's actions as tools a small local model gets right: friendly choice names, a
direction for ``look_at``, compact schemas; and the way back to the registry's calls.

- A parameter with choices offers friendly names (``wave`` for ``LOOKUP_Waving``, from
  :func:`anima.agent.understanding.aliases.choice_aliases`); the registry's own names are still
  accepted. :meth:`FriendlyTools.call` maps a friendly value back before the plan is validated.
- ``look_at`` takes ``direction`` ("left", "up", "down right", …) as well as metres; a direction
  becomes the point its phrase looks at ("look left" → 1 m ahead, 0.6 m left).
- Schemas are compact: the first sentence of each description, the first clause of each
  parameter's (none where an enum already says it), no ``additionalProperties`` and no empty
  ``required`` (every token is read with each request).

Everything is still checked by :func:`~anima.agent.plan.parse_plan` afterwards: a friendly name
only widens what the model may write, never what the robot may do.
"""

from __future__ import annotations

import ast
import copy
import logging
from typing import Any

from anima.agent.actions import ActionRegistry
from anima.agent.planners.base import json_value
from anima.errors import PlannerError
from anima.wire.jsontypes import JsonObject

log = logging.getLogger(__name__)

MAX_MAPPED_CHARS = 500  # a longer action string is not parsed here (parse_plan bounds it)

# direction → point (m, head frame: x forward, y left, z up), as the look_at phrases have them
DIRECTIONS: dict[str, tuple[float, float, float]] = {
    "ahead": (1.0, 0.0, 0.0),
    "left": (1.0, 0.6, 0.0),
    "right": (1.0, -0.6, 0.0),
    "up": (1.0, 0.0, 0.5),
    "down": (1.0, 0.0, -0.4),
    "up left": (1.0, 0.6, 0.5),
    "up right": (1.0, -0.6, 0.5),
    "down left": (1.0, 0.6, -0.4),
    "down right": (1.0, -0.6, -0.4),
}


class FriendlyTools:
    """The tools for one registry, and the mapping of their calls back to it."""

    def __init__(self, registry: ActionRegistry) -> None:
        self._registry = registry
        self._aliases = _choice_aliases(registry)
        self.tools = [self._compact(dict(tool)) for tool in registry.tools()]

    def call(self, name: str, args: JsonObject) -> dict[str, Any]:
        """A tool call's arguments in the registry's terms (friendly names mapped back, a
        direction turned into a point); anything unknown is left for the plan's checks."""
        args = dict(args)
        for param, names in self._aliases.get(name, {}).items():
            value = args.get(param)
            if isinstance(value, str):
                key = value.strip().lower().replace("_", " ")
                args[param] = names.get(key, names.get(value, value))
        if name == "look_at" and "direction" in args:
            direction = args.pop("direction")
            point = DIRECTIONS.get(str(direction).strip().lower().replace("-", " "))
            if point is None:
                args["direction"] = direction  # refused by the plan: look_at has no direction
            else:
                for axis, value in zip("xyz", point, strict=True):
                    args.setdefault(axis, value)
        return args

    def plan_text(self, text: str) -> str:
        """One action string of a JSON reply with friendly values mapped back
        (``play_animation('wave')`` → ``play_animation(name='LOOKUP_Waving')``); as it was
        when there is nothing to map or it is not a plain call (the plan's checks say why)."""
        if len(text) > MAX_MAPPED_CHARS:
            return text
        try:
            node = ast.parse(text.strip(), mode="eval").body
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return text
        if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name):
            return text
        name = node.func.id
        act = self._registry.get(name)
        if act is None or len(node.args) > len(act.params):
            return text
        values: dict[str, Any] = {}
        for param, arg in zip(act.params, node.args, strict=False):
            if not isinstance(arg, ast.Constant):
                return text
            values[param.name] = arg.value
        for kw in node.keywords:
            if kw.arg is None or not isinstance(kw.value, ast.Constant):
                return text
            values[kw.arg] = kw.value.value
        mapped = self.call(name, values)
        if mapped == values:
            return text
        return f"{name}({', '.join(f'{k}={v!r}' for k, v in mapped.items())})"

    def _compact(self, tool: dict[str, Any]) -> dict[str, Any]:
        tool = copy.deepcopy(tool)
        function = tool["function"]
        name = function["name"]
        function["description"] = _first_sentence(function.get("description", ""))
        schema = function["parameters"]
        schema.pop("additionalProperties", None)
        properties: dict[str, Any] = schema.get("properties", {})
        for param, spec in properties.items():
            names = self._aliases.get(name, {}).get(param)
            if names and "enum" in spec:
                spec["enum"] = list(names)  # the friendly names (the real ones still work)
                spec.pop("description", None)
            elif "description" in spec:
                spec["description"] = _first_clause(spec["description"])
        if not schema.get("required"):
            schema.pop("required", None)
        if name == "look_at" and {"x", "y", "z"} <= set(properties):
            properties["direction"] = {"type": "string", "enum": list(DIRECTIONS)}
            function["description"] += " Give a direction, or x, y, z in metres."
            schema.pop("required", None)
        return tool


def _first_clause(text: str) -> str:
    """The description up to its first comma or semicolon ("the words to speak, in the
    robot's language" → "the words to speak"; "metres up (negative: down)" stays)."""
    return text.split(", ", 1)[0].split("; ", 1)[0]


def _first_sentence(text: str) -> str:
    """Up to the first full stop or semicolon: what the action does, not how."""
    head = text.partition(". ")[0].partition("; ")[0].rstrip(".")
    return head + "." if head else ""


def _choice_aliases(registry: ActionRegistry) -> dict[str, dict[str, dict[str, Any]]]:
    """friendly name → choice per action and parameter (H4's understanding); {} when absent."""
    try:
        from anima.agent.understanding.aliases import choice_aliases
    except ImportError:  # the understanding layer is not there: the registry's names only
        return {}
    out: dict[str, dict[str, dict[str, Any]]] = {}
    for action, params in choice_aliases(registry).items():
        for param, names in params.items():
            out.setdefault(action, {})[param] = {k.lower(): v for k, v in names.items()}
    return out


# ---------------------------------------------------------------------- a reply's tool calls
def tool_call(call: Any, n: int) -> tuple[str, JsonObject, str]:
    """(name, arguments, id) of one tool call, or PlannerError."""
    try:
        function = call["function"]
        name = function["name"]
        raw = function.get("arguments") or "{}"
    except (KeyError, TypeError, AttributeError):
        raise PlannerError(f"malformed reply: tool call {n} has no function name") from None
    if not isinstance(name, str):
        raise PlannerError(f"malformed reply: tool call {n} names a {type(name).__name__}")
    if not name.isidentifier():
        raise PlannerError(f"malformed reply: tool call {n} names {name[:40]!r}")
    args = json_value(raw, f"the arguments of {name}") if isinstance(raw, str) else raw
    if not isinstance(args, dict):
        raise PlannerError(f"malformed reply: the arguments of {name} are not an object")
    call_id = call.get("id") if isinstance(call, dict) else None
    return name, args, call_id if isinstance(call_id, str) and call_id else f"call_{n}"


def action_string(name: str, args: JsonObject) -> str:
    """``name(key=value, …)`` from a tool call's JSON arguments; PlannerError for arguments a
    plan could not carry (nested objects, keys that are not names)."""
    parts = []
    for key, value in args.items():
        if not key.isidentifier():
            raise PlannerError(f"malformed reply: {name} has an argument named {key[:40]!r}")
        if not _plain(value):
            raise PlannerError(f"malformed reply: {name}({key}=…) is not a plain value")
        parts.append(f"{key}={value!r}")
    return f"{name}({', '.join(parts)})"


def _plain(value: Any, depth: int = 0) -> bool:
    if value is None or isinstance(value, str | int | float | bool):
        return True
    if isinstance(value, list) and depth == 0:
        return all(_plain(v, 1) for v in value)
    return False
