"""An action's parameters: what its annotations allow, as a JSON schema and as a value check.

Supported annotations: ``str``, ``int``, ``float``, ``bool``, ``Literal[...]`` of one of those,
``tuple[T, ...]``, ``tuple[T, T, …]`` and ``list[T]`` of a scalar ``T``, and ``T | None``.
Anything else is refused when the action is registered, so a plan can never carry a value the
action did not declare. The same :meth:`Param.check` serves the plan parser, the phrases of the
rule planner and the JSON arguments of tool calls.
"""

from __future__ import annotations

import inspect
import math
import re
import types
import typing
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Union

from anima.errors import ActionDefinitionError
from anima.wire.jsontypes import JsonDict, JsonObject

Scalar = str | int | float | bool
Value = Scalar | tuple[Scalar, ...] | list[Scalar] | None

_SCALARS: dict[type, str] = {str: "string", int: "integer", float: "number", bool: "boolean"}
_NO_DEFAULT = inspect.Parameter.empty


@dataclass(frozen=True, kw_only=True)
class Param:
    """One parameter of an action, as plans and the LLM see it."""

    name: str
    kind: type  # str | int | float | bool, or tuple | list for sequences
    item: type | None = None  # sequences: the scalar type of the items
    length: int | None = None  # fixed-length tuples: how many items
    optional: bool = False  # also accepts None
    choices: tuple[Scalar, ...] | None = None  # the only accepted values (Literal or choices=)
    bounds: tuple[float, float] | None = None  # numbers: inclusive range (bounds=)
    default: Any = _NO_DEFAULT  # inspect.Parameter.empty when required
    description: str = ""  # from the docstring's Args section
    # a further check of the converted value (raises ValueError): e.g. the speech markers in
    # say's text against the animation library
    validate: Callable[[Any], None] | None = field(default=None, compare=False, repr=False)
    # a string that is not one of the choices, mapped to the choice it stands for (an
    # animation's alias: "wave" → LOOKUP_Waving), or ValueError saying what is close (added
    # to the refusal)
    resolve: Callable[[str], str] | None = field(default=None, compare=False, repr=False)

    @property
    def required(self) -> bool:
        return self.default is _NO_DEFAULT

    @property
    def type_name(self) -> str:
        """The annotation, written back as a user would read it."""
        if self.choices is not None and self.kind is not tuple and self.kind is not list:
            name = "Literal[" + ", ".join(repr(c) for c in self.choices) + "]"
        elif self.kind in (tuple, list):
            assert self.item is not None
            inner = self.item.__name__
            if self.kind is list:
                name = f"list[{inner}]"
            elif self.length is None:
                name = f"tuple[{inner}, ...]"
            else:
                name = "tuple[" + ", ".join([inner] * self.length) + "]"
        else:
            name = self.kind.__name__
        return f"{name} | None" if self.optional else name

    def usage(self) -> str:
        """``name: type`` or ``name: type = default``."""
        text = f"{self.name}: {self.type_name}"
        return text if self.required else f"{text} = {self.default!r}"

    def schema(self) -> JsonObject:
        """The JSON schema of this parameter (for LLM tools)."""
        if self.kind in (tuple, list):
            assert self.item is not None
            out: JsonDict = {"type": "array", "items": self._scalar_schema(self.item)}
            if self.length is not None:
                out["minItems"] = out["maxItems"] = self.length
        else:
            out = self._scalar_schema(self.kind)
        if self.optional:
            out["type"] = [out["type"], "null"]
        if self.description:
            out["description"] = self.description
        if not self.required and self.default is not None:
            out["default"] = list(self.default) if isinstance(self.default, tuple) else self.default
        return out

    def _scalar_schema(self, kind: type) -> JsonDict:
        out: JsonDict = {"type": _SCALARS[kind]}
        if self.choices is not None:
            out["enum"] = list(self.choices)
        if self.bounds is not None:
            out["minimum"], out["maximum"] = self.bounds
        return out

    def check(self, value: object) -> Value:
        """``value`` converted to this parameter's type; ValueError saying why it is refused."""
        if value is None:
            if self.optional or self.default is None:
                return None
            raise ValueError(f"{self.name} must be {self.type_name}, got None")
        if self.kind in (tuple, list):
            if not isinstance(value, tuple | list):
                raise ValueError(f"{self.name} must be {self.type_name}, got {_shown(value)}")
            if self.length is not None and len(value) != self.length:
                raise ValueError(f"{self.name} needs {self.length} items, got {len(value)}")
            assert self.item is not None
            items = [self._scalar(self.item, v, f"{self.name}[{i}]") for i, v in enumerate(value)]
            out: Value = tuple(items) if self.kind is tuple else items
        else:
            out = self._scalar(self.kind, value, self.name)
        if self.validate is not None:
            self.validate(out)
        return out

    def _scalar(self, kind: type, value: object, where: str) -> Scalar:
        out: Scalar
        if kind is bool:
            if not isinstance(value, bool):
                raise ValueError(f"{where} must be true or false, got {_shown(value)}")
            out = value
        elif kind is int:
            if isinstance(value, bool) or not isinstance(value, int):
                raise ValueError(f"{where} must be an integer, got {_shown(value)}")
            out = value
        elif kind is float:
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise ValueError(f"{where} must be a number, got {_shown(value)}")
            try:
                out = float(value)
            except OverflowError:  # an integer beyond any float (a model can write 400 digits)
                out = math.inf
            if not math.isfinite(out):
                raise ValueError(f"{where} must be a finite number, got {_shown(value)}")
        else:
            if not isinstance(value, str):
                raise ValueError(f"{where} must be a string, got {_shown(value)}")
            out = value
        hint = ""
        resolve = self.resolve
        if resolve and isinstance(out, str) and self.choices and out not in self.choices:
            try:
                out = resolve(out)
            except ValueError as exc:  # its reason: "did you mean LOOKUP_Waving?"
                hint = f" ({exc})" if str(exc) else ""
        if self.choices is not None and out not in self.choices:
            raise ValueError(
                f"{where} must be one of {', '.join(repr(c) for c in self.choices)}, "
                f"got {_shown(out)}{hint}"
            )
        if self.bounds is not None and isinstance(out, int | float) and not isinstance(out, bool):
            lo, hi = self.bounds
            if not lo <= out <= hi:
                raise ValueError(f"{where} must be in [{lo:g}, {hi:g}], got {_shown(out)}")
        return out


def _shown(value: object) -> str:
    text = repr(value)
    text = text if len(text) <= 40 else text[:40] + "…"
    return f"{type(value).__name__} {text}"


def _kind_of(
    where: str, annotation: Any
) -> tuple[type, type | None, int | None, tuple[Any, ...] | None]:
    """(kind, item, length, Literal values) of a non-optional annotation."""
    origin = typing.get_origin(annotation)
    if origin is Literal:
        literal = typing.get_args(annotation)
        kinds = {type(v) for v in literal}
        if len(kinds) != 1 or next(iter(kinds)) not in _SCALARS:
            raise ActionDefinitionError(f"{where}: Literal values must all be str, int or bool")
        return next(iter(kinds)), None, None, literal
    if origin in (tuple, list):
        args = typing.get_args(annotation)
        length: int | None = None
        if origin is tuple and len(args) == 2 and args[1] is Ellipsis:
            args = args[:1]
        elif origin is tuple:
            length = len(args)
        if not args or len(set(args)) != 1 or args[0] not in _SCALARS:
            raise ActionDefinitionError(
                f"{where}: sequences must hold one scalar type (tuple[float, ...], list[str])"
            )
        return origin, args[0], length, None
    if annotation in _SCALARS:
        return annotation, None, None, None
    raise ActionDefinitionError(
        f"{where}: unsupported annotation {annotation!r} "
        "(use str, int, float, bool, Literal[...], tuple/list of those, or T | None)"
    )


def param_from(
    action: str,
    parameter: inspect.Parameter,
    annotation: Any,
    *,
    description: str = "",
    choices: Sequence[Scalar] | None = None,
    bounds: tuple[float, float] | None = None,
) -> Param:
    """Build a :class:`Param` from an annotation; ActionDefinitionError when unsupported."""
    where = f"action {action!r}, parameter {parameter.name!r}"
    optional = False
    if typing.get_origin(annotation) in (Union, types.UnionType):
        args = typing.get_args(annotation)
        inner = [a for a in args if a is not type(None)]
        if len(inner) != 1 or len(args) != 2:
            raise ActionDefinitionError(f"{where}: only `T | None` unions are supported")
        optional, annotation = True, inner[0]
    kind, item, length, literal = _kind_of(where, annotation)
    if choices is not None:
        if literal is not None:
            raise ActionDefinitionError(f"{where}: both a Literal annotation and choices=")
        literal = tuple(choices)
        if not literal:
            raise ActionDefinitionError(f"{where}: choices= is empty")
    if bounds is not None:
        lo, hi = bounds
        if (item or kind) not in (int, float) or not (math.isfinite(lo) and lo <= hi):
            raise ActionDefinitionError(f"{where}: bounds= needs a number type and lo ≤ hi")
    param = Param(
        name=parameter.name,
        kind=kind,
        item=item,
        length=length,
        optional=optional,
        choices=literal,
        bounds=bounds,
        default=parameter.default,
        description=description,
    )
    for value in literal or ():
        try:
            param._scalar(item or kind, value, parameter.name)
        except ValueError as exc:
            raise ActionDefinitionError(f"{where}: choice {value!r}: {exc}") from None
    if not param.required:
        try:
            param.check(parameter.default)
        except ValueError as exc:
            raise ActionDefinitionError(f"{where}: default {exc}") from None
    return param


def describe(doc: str) -> tuple[str, dict[str, str]]:
    """The first paragraph of a docstring and the ``name: text`` lines of its Args section."""
    doc = inspect.cleandoc(doc)
    summary = " ".join(doc.split("\n\n", 1)[0].split())
    args: dict[str, str] = {}
    in_args = False
    for line in doc.splitlines():
        stripped = line.strip()
        if stripped in ("Args:", "Arguments:", "Parameters:"):
            in_args = True
            continue
        if in_args:
            if not stripped:
                continue
            if not line.startswith((" ", "\t")):
                break
            m = re.match(r"(\w+)(?:\s*\([^)]*\))?\s*:\s*(.*)", stripped)
            if m:
                args[m.group(1)] = m.group(2)
    return summary, args
