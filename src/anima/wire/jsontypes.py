"""JSON as the wire carries it, typed (not named json.py: it would shadow the package's json).

``JsonObject`` is read-only (a ``Mapping``, covariant): a ``dict[str, list[str]]`` built from
typed values is one, so builders are checked all the way down. Values read from outside are
narrowed (``isinstance``) where they are used, since anything may come over a wire.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TypeAlias

JsonValue: TypeAlias = (
    "str | int | float | bool | Sequence[JsonValue] | Mapping[str, JsonValue] | None"
)
JsonObject: TypeAlias = "Mapping[str, JsonValue]"
JsonDict: TypeAlias = "dict[str, JsonValue]"  # one being built (a JsonObject once returned)
