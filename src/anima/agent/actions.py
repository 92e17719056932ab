"""The robot's vocabulary: typed Python functions registered as actions.

An action is a function whose first parameter receives the :class:`~anima.agent.context.
ActionContext` and whose other parameters are typed (see :mod:`anima.agent.params`)::

    @action(phrases=("wave", Phrase("wave hello")), choices={"hand": ("left", "right")})
    def wave(ctx: ActionContext, hand: str = "right") -> ActionResult:
        \"\"\"Wave a hand.

        Args:
            hand: which hand to wave
        \"\"\"
        ...

    registry = ActionRegistry()
    registry.add(wave)

The decorator only describes the function; nothing is registered until ``registry.add`` (there
is no global registry and no import side effect). From one definition come the JSON schema for
LLM tools (:meth:`Action.tool`), the phrases for the rule planner and the ASR grammar, and the
lines of ``anima actions list``. Actions return the seed's result protocol (:data:`ActionResult`).
"""

from __future__ import annotations

import inspect
import keyword
import types
import typing
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, overload

from anima.agent.params import Param, Scalar, Value, describe, param_from
from anima.agent.phrases import Phrase
from anima.errors import ActionDefinitionError
from anima.wire.jsontypes import JsonObject

ActionResult = None | bool | tuple[bool, str]
"""What an action returns (the seed's protocol): ``None`` — nothing to report (self-feedback);
``True`` — done; ``(ok, message)`` — done or failed, with a message for the planner."""

ActionFn = Callable[..., ActionResult]


@dataclass(frozen=True, eq=False)
class Action:
    """One registered action: its function, description, parameters and phrases."""

    name: str
    fn: ActionFn
    summary: str  # the docstring's first paragraph: what it does (the LLM reads it)
    doc: str  # the whole docstring
    params: tuple[Param, ...]
    phrases: tuple[Phrase, ...] = ()
    signature: inspect.Signature = field(default_factory=inspect.Signature)  # without ctx

    def param(self, name: str) -> Param:
        for p in self.params:
            if p.name == name:
                return p
        raise KeyError(name)

    def usage(self) -> str:
        """``name(p: type, q: type = default)``: how to call it in a plan."""
        return f"{self.name}({', '.join(p.usage() for p in self.params)})"

    def parameters_schema(self) -> JsonObject:
        """The JSON schema of the arguments, an object keyed by parameter name."""
        return {
            "type": "object",
            "properties": {p.name: p.schema() for p in self.params},
            "required": [p.name for p in self.params if p.required],
            "additionalProperties": False,
        }

    def tool(self) -> JsonObject:
        """The OpenAI-compatible ``tools`` entry for this action."""
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.summary,
                "parameters": self.parameters_schema(),
            },
        }

    def call_text(self, values: Mapping[str, Value]) -> str:
        """The canonical action string for these argument values: ``name(p='x', q=2.0)``."""
        args = ", ".join(f"{k}={v!r}" for k, v in values.items())
        return f"{self.name}({args})"

    def check_args(self, values: Mapping[str, object]) -> dict[str, Value]:
        """Arguments by name, checked and converted; ValueError naming the first bad one."""
        out: dict[str, Value] = {}
        known = {p.name for p in self.params}
        for key in values:
            if key not in known:
                raise ValueError(f"unknown argument {key!r} (takes {self.usage()})")
        for p in self.params:
            if p.name in values:
                out[p.name] = p.check(values[p.name])
            elif p.required:
                raise ValueError(f"missing argument {p.name!r} (takes {self.usage()})")
        return out

    def with_constraints(
        self,
        *,
        choices: Mapping[str, Sequence[Scalar]] | None = None,
        bounds: Mapping[str, tuple[float, float]] | None = None,
        validators: Mapping[str, Callable[[Any], None]] | None = None,
        resolvers: Mapping[str, Callable[[str], str]] | None = None,
    ) -> Action:
        """A copy whose parameters accept only these choices/bounds (e.g. the animations the
        library really has), pass these validators (raising ValueError) and map a string
        that is not a choice to the one it stands for with these resolvers (an animation's
        alias); phrases that no longer fit are dropped."""
        choices, bounds, validators = choices or {}, bounds or {}, validators or {}
        resolvers = resolvers or {}
        for key in [*choices, *bounds, *validators, *resolvers]:
            self.param(key)  # KeyError for a typo
        params = tuple(
            replace(
                p,
                choices=tuple(choices[p.name]) if p.name in choices else p.choices,
                bounds=bounds.get(p.name, p.bounds),
                validate=validators.get(p.name, p.validate),
                resolve=resolvers.get(p.name, p.resolve),
            )
            for p in self.params
        )
        copy = replace(self, params=params, phrases=())
        kept = []
        for ph in self.phrases:
            try:
                copy.check_args(_phrase_probe(copy, ph))
            except ValueError:
                continue
            kept.append(ph)
        return replace(copy, phrases=tuple(kept))


def _phrase_probe(action: Action, phrase: Phrase) -> dict[str, object]:
    """The phrase's fixed arguments, with a valid stand-in for each slot (to check the rest)."""
    probe: dict[str, object] = dict(phrase.args)
    for slot in phrase.slots:
        p = action.param(slot)
        probe[slot] = p.choices[0] if p.choices else p.kind(1) if p.kind in (int, float) else "x"
    return probe


def _hints(name: str, fn: ActionFn, params: Sequence[inspect.Parameter]) -> JsonObject:
    """The annotations of ``params`` resolved; ctx's and the return's are never evaluated, so a
    module may import ActionContext under TYPE_CHECKING only."""
    wanted = {p.name: p.annotation for p in params if p.annotation is not inspect.Parameter.empty}
    localns: dict[str, object] = {}
    if fn.__closure__:  # actions built inside a function may use its local names
        localns.update(inspect.getclosurevars(fn).nonlocals)
    try:
        return typing.get_type_hints(
            types.SimpleNamespace(__annotations__=wanted),
            globalns=getattr(fn, "__globals__", {}),
            localns=localns,
        )
    except Exception as exc:  # a NameError in a string annotation, most often
        raise ActionDefinitionError(f"action {name!r}: cannot resolve annotations: {exc}") from exc


def make_action(
    fn: ActionFn,
    *,
    name: str | None = None,
    phrases: Iterable[str | Phrase] = (),
    choices: Mapping[str, Sequence[Scalar]] | None = None,
    bounds: Mapping[str, tuple[float, float]] | None = None,
) -> Action:
    """Describe ``fn`` as an action; ActionDefinitionError when it cannot be one."""
    name = name or fn.__name__
    if not name.isidentifier() or keyword.iskeyword(name) or name.startswith("_"):
        raise ActionDefinitionError(f"action name {name!r} must be a public Python identifier")
    doc = inspect.getdoc(fn) or ""
    if not doc.strip():
        raise ActionDefinitionError(f"action {name!r} needs a docstring: the planner reads it")
    summary, arg_docs = describe(doc)
    sig = inspect.signature(fn)
    params = list(sig.parameters.values())
    if not params or params[0].kind not in (
        inspect.Parameter.POSITIONAL_ONLY,
        inspect.Parameter.POSITIONAL_OR_KEYWORD,
    ):
        raise ActionDefinitionError(
            f"action {name!r}: the first parameter must take the ActionContext (ctx)"
        )
    hints = _hints(name, fn, params[1:])
    choices, bounds = dict(choices or {}), dict(bounds or {})
    out: list[Param] = []
    for p in params[1:]:
        if p.kind in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD):
            raise ActionDefinitionError(f"action {name!r}: *args and **kwargs are not supported")
        if p.name not in hints:
            raise ActionDefinitionError(f"action {name!r}: parameter {p.name!r} has no annotation")
        out.append(
            param_from(
                name,
                p,
                hints[p.name],
                description=arg_docs.get(p.name, ""),
                choices=choices.pop(p.name, None),
                bounds=bounds.pop(p.name, None),
            )
        )
    if choices or bounds:
        extra = sorted({*choices, *bounds})
        raise ActionDefinitionError(f"action {name!r}: no parameter named {', '.join(extra)}")
    action = Action(
        name=name,
        fn=fn,
        summary=summary,
        doc=doc,
        params=tuple(out),
        signature=sig.replace(parameters=params[1:]),
    )
    checked: list[Phrase] = []
    for ph in phrases:
        phrase = Phrase(ph) if isinstance(ph, str) else ph
        where = f"action {name!r}, phrase {phrase.text!r}"
        for slot in phrase.slots:
            if slot in phrase.args:
                raise ActionDefinitionError(f"{where}: {slot!r} is both a slot and an argument")
        try:
            for slot in phrase.slots:
                action.param(slot)
            action.check_args(_phrase_probe(action, phrase))
        except (KeyError, ValueError) as exc:
            raise ActionDefinitionError(f"{where}: {exc}") from None
        checked.append(phrase)
    return replace(action, phrases=tuple(checked))


@overload
def action(fn: ActionFn, /) -> Action: ...


@overload
def action(
    *,
    name: str | None = None,
    phrases: Iterable[str | Phrase] = (),
    choices: Mapping[str, Sequence[Scalar]] | None = None,
    bounds: Mapping[str, tuple[float, float]] | None = None,
) -> Callable[[ActionFn], Action]: ...


def action(
    fn: ActionFn | None = None,
    /,
    *,
    name: str | None = None,
    phrases: Iterable[str | Phrase] = (),
    choices: Mapping[str, Sequence[Scalar]] | None = None,
    bounds: Mapping[str, tuple[float, float]] | None = None,
) -> Action | Callable[[ActionFn], Action]:
    """Decorator: describe a function as an :class:`Action` (it registers nothing).

    ``phrases``: words that ask for it (rule planner, ASR grammar); ``choices``: the accepted
    values of a parameter; ``bounds``: the inclusive range of a number parameter.
    """

    def wrap(f: ActionFn) -> Action:
        return make_action(f, name=name, phrases=phrases, choices=choices, bounds=bounds)

    return wrap(fn) if fn is not None else wrap


class ActionRegistry:
    """The actions a planner may use: a plain dict from name to :class:`Action`."""

    def __init__(self, actions: Iterable[Action] = ()) -> None:
        self._actions: dict[str, Action] = {}
        for a in actions:
            self.add(a)

    def add(self, item: Action | ActionFn, *, replace: bool = False) -> Action:
        """Register an :class:`Action` (or a plain documented function); returns it."""
        act = item if isinstance(item, Action) else make_action(item)
        if act.name in self._actions and not replace:
            raise ActionDefinitionError(
                f"action {act.name!r} is already registered (pass replace=True to override it)"
            )
        self._actions[act.name] = act
        return act

    def action(
        self,
        *,
        name: str | None = None,
        phrases: Iterable[str | Phrase] = (),
        choices: Mapping[str, Sequence[Scalar]] | None = None,
        bounds: Mapping[str, tuple[float, float]] | None = None,
        replace: bool = False,
    ) -> Callable[[ActionFn], Action]:
        """Decorator: describe and register in this registry."""

        def wrap(f: ActionFn) -> Action:
            act = make_action(f, name=name, phrases=phrases, choices=choices, bounds=bounds)
            return self.add(act, replace=replace)

        return wrap

    def remove(self, name: str) -> None:
        self._actions.pop(name, None)

    def constrain(
        self,
        name: str,
        *,
        choices: Mapping[str, Sequence[Scalar]] | None = None,
        bounds: Mapping[str, tuple[float, float]] | None = None,
        validators: Mapping[str, Callable[[Any], None]] | None = None,
        resolvers: Mapping[str, Callable[[str], str]] | None = None,
    ) -> None:
        """Narrow a registered action's parameters (see :meth:`Action.with_constraints`)."""
        self._actions[name] = self._actions[name].with_constraints(
            choices=choices, bounds=bounds, validators=validators, resolvers=resolvers
        )

    def get(self, name: str) -> Action | None:
        return self._actions.get(name)

    def __getitem__(self, name: str) -> Action:
        return self._actions[name]

    def __contains__(self, name: object) -> bool:
        return name in self._actions

    def __iter__(self) -> Iterator[Action]:
        return iter(sorted(self._actions.values(), key=lambda a: a.name))

    def __len__(self) -> int:
        return len(self._actions)

    def names(self) -> list[str]:
        return sorted(self._actions)

    def tools(self) -> list[JsonObject]:
        """Every action as an OpenAI-compatible tool."""
        return [a.tool() for a in self]

    def phrases(self) -> list[tuple[Phrase, Action]]:
        """Every phrase with its action (the rule planner's table, the ASR grammar's source)."""
        return [(ph, a) for a in self for ph in a.phrases]

    def grammar_phrases(self) -> list[str]:
        """The phrases without slots, for a command grammar (slots need open vocabulary)."""
        return sorted({ph.text for ph, _ in self.phrases() if not ph.slots})
