"""Plans: action strings such as ``play_animation("nod")``, validated before anything moves.

Each string is parsed with :mod:`ast` (``mode="eval"``) and must be one call of a registered
action by its bare name, with literal arguments only: strings, numbers (a leading minus
allowed), ``True``/``False``/``None``, and lists or tuples of those where the parameter is a
sequence. Keyword arguments are allowed. Arguments are bound to the action's signature
(:meth:`inspect.Signature.bind`) and checked against its types, choices and bounds.

Everything else is refused with a :class:`~anima.errors.PlanError` that names the step and says
why: an unknown action, attribute access (``play_animation.__globals__``), a call inside an
argument (``say(open('f'))``), a name used as a value, a subscript, a lambda, ``*args``, wrong
arity, a wrong type. Nothing is ever evaluated: only nodes of the literal kinds above reach
:func:`ast.literal_eval`, and actions are found in the registry's dict, never with ``getattr``.
The whole plan is checked before the first step runs; one bad step rejects the plan.

Each refusal also says why in a few plain words (``PlanError.said``, e.g. "'dance' is not
something I know"), which :func:`refusal_speech` turns into what the robot says.
"""

from __future__ import annotations

import ast
import itertools
import uuid
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

from anima.agent.actions import Action, ActionRegistry
from anima.agent.params import Param, Value
from anima.errors import PlanError

MAX_STEP_CHARS = 2000  # longer action strings are refused before parsing
MAX_STEPS = 50  # a plan longer than this is refused
NOT_VALID = "the plan I made for it was not valid"  # said when no plainer reason applies

_NODE_NAMES: dict[type[ast.AST], str] = {
    ast.Call: "a call",
    ast.Attribute: "attribute access",
    ast.Subscript: "a subscript",
    ast.Name: "a name",
    ast.Lambda: "a lambda",
    ast.Starred: "a starred argument",
    ast.BinOp: "an expression",
    ast.BoolOp: "an expression",
    ast.Compare: "a comparison",
    ast.IfExp: "an expression",
    ast.Dict: "a dict",
    ast.Set: "a set",
    ast.ListComp: "a comprehension",
    ast.SetComp: "a comprehension",
    ast.DictComp: "a comprehension",
    ast.GeneratorExp: "a comprehension",
    ast.JoinedStr: "an f-string",
    ast.NamedExpr: "an assignment",
    ast.Await: "an expression",
}

_ids = itertools.count(1)


@dataclass(frozen=True, kw_only=True)
class Step:
    """One validated step: the action, its checked arguments, the text to show."""

    index: int  # 0-based position in the plan
    action: Action
    args: tuple[Value, ...]  # positional arguments after ctx, checked and converted
    kwargs: Mapping[str, Value]  # keyword-only arguments, checked and converted
    text: str  # canonical action string, e.g. play_animation(name='nod')
    source: str  # the string as given

    @property
    def name(self) -> str:
        return self.action.name


@dataclass(frozen=True, kw_only=True)
class Plan:
    """A validated plan: nothing in it can fail to parse, bind or type-check."""

    steps: tuple[Step, ...]
    id: str = field(default_factory=lambda: f"p{next(_ids)}-{uuid.uuid4().hex[:6]}")

    def __len__(self) -> int:
        return len(self.steps)

    @property
    def texts(self) -> tuple[str, ...]:
        return tuple(s.text for s in self.steps)


def parse_plan(registry: ActionRegistry, actions: Iterable[str]) -> Plan:
    """Validate every action string; the whole plan or a PlanError naming the first bad step."""
    items = list(actions)
    if len(items) > MAX_STEPS:
        raise PlanError(
            f"plan rejected: {len(items)} steps, at most {MAX_STEPS}",
            said=f"it takes more than {MAX_STEPS} steps",
        )
    return Plan(steps=tuple(parse_step(registry, s, i) for i, s in enumerate(items)))


def parse_step(registry: ActionRegistry, source: str, index: int = 0) -> Step:
    """One action string → a :class:`Step`; PlanError naming the step and the reason."""
    if not isinstance(source, str):
        raise PlanError(
            f"step {index + 1}: an action string is needed, got {type(source).__name__}",
            index=index,
            step=repr(source)[:80],
            said=NOT_VALID,
        )
    shown = source if len(source) <= 80 else source[:80] + "…"

    def fail(reason: str, said: str = NOT_VALID) -> PlanError:
        return PlanError(
            f"step {index + 1} {shown!r}: {reason}", index=index, step=source, said=said
        )

    if len(source) > MAX_STEP_CHARS:
        raise fail(f"longer than {MAX_STEP_CHARS} characters")
    try:
        tree = ast.parse(source.strip(), mode="eval")
    except SyntaxError as exc:
        raise fail(f"not a call: {exc.msg}") from None
    except (ValueError, RecursionError, MemoryError) as exc:  # absurd literals or nesting
        raise fail(f"cannot be parsed: {type(exc).__name__}") from None
    node = tree.body
    if isinstance(node, ast.Name):  # `stop` is read as `stop()`
        node = ast.Call(func=node, args=[], keywords=[])
    if not isinstance(node, ast.Call):
        raise fail(f"must be one call like name(arg, ...), found {_what(node)}")
    if not isinstance(node.func, ast.Name):
        raise fail(f"the action must be a plain name, found {_what(node.func)}")
    act = registry.get(node.func.id)
    if act is None:
        known = ", ".join(registry.names())
        raise fail(f"unknown action {node.func.id!r} (known: {known})", _unknown(node.func.id))
    positional: list[object] = []
    for arg in node.args:
        if isinstance(arg, ast.Starred):
            raise fail("starred arguments (*x) are not allowed")
        positional.append(_literal(arg, fail))
    keywords: dict[str, object] = {}
    for kw in node.keywords:
        if kw.arg is None:
            raise fail("**arguments are not allowed")
        if kw.arg in keywords:
            raise fail(f"argument {kw.arg!r} given twice")
        keywords[kw.arg] = _literal(kw.value, fail)
    names = {p.name for p in act.params}
    for key in keywords:
        if key not in names:
            raise fail(f"unexpected keyword argument {key!r} (takes {act.usage()})")
    try:
        bound = act.signature.bind(*positional, **keywords)
    except TypeError as exc:
        raise fail(f"{exc} (takes {act.usage()})") from None
    for name, value in list(bound.arguments.items()):
        param = act.param(name)
        try:
            bound.arguments[name] = param.check(value)
        except ValueError as exc:
            raise fail(str(exc), _said_for(param, value)) from None
    given: dict[str, Value] = dict(bound.arguments)
    return Step(
        index=index,
        action=act,
        args=tuple(bound.args),
        kwargs=dict(bound.kwargs),
        text=act.call_text(given),
        source=source,
    )


def step_from_values(action: Action, values: Mapping[str, object], index: int = 0) -> Step:
    """A step from arguments by name (tool calls, phrases), checked like a parsed one."""
    try:
        checked = action.check_args(values)
    except ValueError as exc:
        raise PlanError(f"step {index + 1} {action.name}: {exc}", index=index) from None
    text = action.call_text(checked)
    return parse_step(ActionRegistry([action]), text, index)


def _literal(node: ast.expr, fail: Callable[[str], PlanError]) -> object:
    """The value of a literal node; anything that is not a literal is refused, unevaluated."""
    if not _is_literal(node):
        if isinstance(node, ast.Call):
            raise fail("calls are not allowed inside arguments")
        if isinstance(node, ast.Name):
            raise fail(f"names are not allowed as arguments ({node.id}: quote strings)")
        raise fail(f"arguments must be literals, found {_what(node)}")
    return ast.literal_eval(node)


def _is_literal(node: ast.expr, depth: int = 0) -> bool:
    if isinstance(node, ast.Constant):
        return isinstance(node.value, str | int | float | bool) or node.value is None
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        operand = node.operand
        return (
            isinstance(operand, ast.Constant)
            and isinstance(operand.value, int | float)
            and not isinstance(operand.value, bool)
        )
    if isinstance(node, ast.Tuple | ast.List) and depth == 0:
        return all(_is_literal(e, depth + 1) for e in node.elts)
    return False


def _what(node: ast.AST) -> str:
    for kind, name in _NODE_NAMES.items():
        if isinstance(node, kind):
            return name
    if isinstance(node, ast.Tuple | ast.List | ast.Constant):
        return "a value"
    return type(node).__name__


def _unknown(name: object) -> str:
    """ "'dance' is not something I know", for a name short enough to say."""
    words = str(name).replace("_", " ").strip()
    if not words or len(words) > 40 or not words.isprintable():
        return "it is not something I know"
    return f"{words!r} is not something I know"


def _said_for(param: Param, value: object) -> str:
    """A refused argument in plain words: an unknown choice, a number out of range."""
    values = value if isinstance(value, tuple | list) else (value,)
    if param.choices is not None:
        for v in values:
            if isinstance(v, str) and v not in param.choices:
                return _unknown(v)
    if param.bounds is not None:
        lo, hi = param.bounds
        for v in values:
            if isinstance(v, int | float) and not isinstance(v, bool) and not lo <= v <= hi:
                return f"{param.name.replace('_', ' ')} must be between {lo:g} and {hi:g}"
    return NOT_VALID


def refusal_speech(error: PlanError) -> str:
    """What the robot says when its plan was refused: that it did nothing, and why, briefly."""
    return f"Sorry, I can't do that: {error.said or NOT_VALID}."


def rejection_feedback(error: PlanError) -> str:
    """What to tell the planner when its plan was refused (nothing moved)."""
    return f"Robot feedback: plan rejected, nothing was done: {error}"
