"""YAML for configuration: bounded, and remembering the line of every key.

``yaml.safe_load`` shares the node of an alias, so a 311-byte "billion laughs" file loads
quickly, but anything that walks the result (our checks, an error's ``repr``) walks every
expansion: 15 s, 1.77 GB and a 351 MB error message. Here the expanded size of the document is
counted on the composed nodes (each distinct node once) and refused past :data:`MAX_NODES`;
deep nesting and PyYAML's own failures (RecursionError, a 5000-digit integer's ValueError) are
one :class:`~anima.errors.ConfigError` line too.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any

from anima.errors import ConfigError

if TYPE_CHECKING:
    import yaml

MAX_NODES = 100_000  # values in a document once aliases are expanded; a real config has ~100
MAX_DEPTH = 50  # nesting of mappings and lists; the config itself is 3 deep
_MESSAGE = 100  # characters of a YAML error's own message that we repeat


@functools.cache
def _loader() -> type[yaml.SafeLoader]:
    """SafeLoader, with ``yaml.nodes`` kept so keys can be traced to their lines. PyYAML is
    imported here, when a document is first read: ``anima serve`` without a config file or an
    ``ANIMA_`` variable reads none, and its first tick does not wait for the import."""
    import yaml

    class Loader(yaml.SafeLoader):
        pass

    return Loader


def _expanded(node: yaml.Node, memo: dict[int, int], depth: int, where: str) -> int:
    """How many nodes ``node`` stands for once every alias is expanded (memoized by identity)."""
    known = memo.get(id(node))
    if known is not None:
        return known
    if depth > MAX_DEPTH:
        raise ConfigError(f"{where}: nested more than {MAX_DEPTH} levels deep")
    import yaml

    memo[id(node)] = 1  # a node that contains itself counts once (PyYAML builds such cycles)
    total = 1
    if isinstance(node, yaml.SequenceNode):
        total += sum(_expanded(item, memo, depth + 1, where) for item in node.value)
    elif isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            total += _expanded(key, memo, depth + 1, where)
            total += _expanded(value, memo, depth + 1, where)
    memo[id(node)] = total
    return total


def _lines(node: yaml.Node, prefix: str, out: dict[str, int]) -> None:
    """Record the 1-based line of every dotted key (``motion.blink.interval_s``) under node."""
    import yaml

    if not isinstance(node, yaml.MappingNode):
        return
    for key, value in node.value:
        if isinstance(key, yaml.ScalarNode) and isinstance(key.value, str):
            dotted = f"{prefix}{key.value}"
            out.setdefault(dotted, key.start_mark.line + 1)
            _lines(value, f"{dotted}.", out)


def load_yaml(text: str, where: str) -> tuple[Any, dict[str, int]]:
    """Parse one YAML document; returns the data and each dotted key's line.

    Raises :class:`ConfigError` starting with ``where`` (a file name, a variable's name).
    """
    import yaml

    loader = _loader()(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None, {}
        size = _expanded(node, {}, 0, where)
        if size > MAX_NODES:
            raise ConfigError(
                f"{where}: the document expands to {size} values (aliases included), over the "
                f"limit of {MAX_NODES}"
            )
        data = loader.construct_document(node)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        at = f"{where}:{mark.line + 1}" if mark is not None else where
        column = f" (column {mark.column + 1})" if mark is not None else ""
        problem = exc.problem or exc.context or "not YAML"
        raise ConfigError(f"{at}: invalid YAML: {_short(problem)}{column}") from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"{where}: invalid YAML: {_short(str(exc))}") from None
    except RecursionError:
        raise ConfigError(f"{where}: invalid YAML: nested too deeply") from None
    except ValueError as exc:  # e.g. an integer of more than 4300 digits
        raise ConfigError(f"{where}: invalid YAML value: {_short(str(exc))}") from None
    finally:
        loader.dispose()
    lines: dict[str, int] = {}
    _lines(node, "", lines)
    return data, lines


def load_scalar_or_yaml(raw: str, where: str) -> Any:
    """An environment value: YAML when it parses (``50``, ``true``, ``[2, 5]``), else the text."""
    try:
        return load_yaml(raw, where)[0]
    except ConfigError:
        return raw


def _short(message: str) -> str:
    one_line = " ".join(message.split())
    return one_line if len(one_line) <= _MESSAGE else one_line[: _MESSAGE - 1] + "…"
