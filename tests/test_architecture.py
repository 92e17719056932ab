"""The package tree's shape (issue 15): no import cycles, and the agent written against its port.

Every ``import`` and ``from … import`` in ``src/anima`` counts, those under ``TYPE_CHECKING`` and
inside functions included. ``from a.b import c`` depends on the module ``a.b.c`` when there is
one, else on ``a.b`` (as import-linter's grimp counts them).
"""

from __future__ import annotations

import ast
from pathlib import Path

import anima

SRC = Path(anima.__file__).parent


def _modules() -> dict[str, Path]:
    found = {}
    for path in SRC.rglob("*.py"):
        parts = ("anima", *path.relative_to(SRC).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(parts)] = path
    return found


def import_graph() -> dict[str, set[str]]:
    """Each module of anima → the modules of anima it imports."""
    modules = _modules()
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    up = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join([*up, base] if base else up)
                targets = [
                    f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base
                    for alias in node.names
                ]
            graph[name].update(t for t in targets if t in modules and t != name)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_the_graph_sees_plain_conditional_and_relative_imports() -> None:
    """The checks below mean something only if the graph finds the imports they look for."""
    graph = import_graph()
    assert "anima.commands" in graph["anima.runtime"]  # `from anima import commands as cmd`
    assert "anima.humanoid.link" in graph["anima.runtime"]  # under TYPE_CHECKING
    assert "anima.agent.assembly" in graph["anima.build"]  # inside a function
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_there_are_no_import_cycles() -> None:
    assert cycles(import_graph()) == []


def test_no_module_of_the_agent_imports_the_runtime_or_the_composition_root() -> None:
    graph = import_graph()
    reaching = {
        name: sorted(graph[name] & {"anima.runtime", "anima.build", "anima.cli"})
        for name in graph
        if name == "anima.agent" or name.startswith("anima.agent.")
    }
    assert {name: found for name, found in reaching.items() if found} == {}


def test_the_runtime_imports_no_front_door_agent_or_humanoid_client() -> None:
    """The core is wired by the composition root (anima.build), not the other way round."""
    graph = import_graph()
    assert not {
        m
        for m in graph["anima.runtime"]
        if m.startswith(("anima.agent", "anima.frontdoors", "anima.cli", "anima.sdk"))
        or m in ("anima.build", "anima.humanoid.client", "anima.humanoid.server")
    }


def test_the_sdk_and_the_remote_ears_speak_the_wire_package_not_the_servers() -> None:
    """Issue 15: the clients import anima.wire (payloads, topics, events, state, the MQTT
    client factory), never a front door's module."""
    graph = import_graph()
    clients = [
        name
        for name in graph
        if name.startswith("anima.sdk") or name in ("anima.agent.remote", "anima.testing.mqtt")
    ]
    assert "anima.sdk.mqtt" in clients
    reaching = {
        name: sorted(m for m in graph[name] if m.startswith("anima.frontdoors")) for name in clients
    }
    assert {name: found for name, found in reaching.items() if found} == {}
    wire = [name for name in graph if name.startswith("anima.wire")]
    assert not {
        m
        for name in wire
        for m in graph[name]
        if m.startswith(("anima.frontdoors", "anima.sdk", "anima.runtime"))
    }


def test_every_package_imports_first_in_a_fresh_interpreter() -> None:
    """A cycle through a package's ``__init__`` (which the graph above does not follow: it
    counts ``from a.b import c`` as a use of ``a.b.c``) fails only when that package is the
    first thing a process imports: ``import anima.config`` once failed this way while every
    test passed. Each package, and each top-level module, first in its own interpreter."""
    import subprocess
    import sys

    modules = _modules()
    firsts = sorted(
        name
        for name, path in modules.items()
        if (path.name == "__init__.py" or name.count(".") == 1) and name != "anima.__main__"
    )
    assert {"anima.config", "anima.speech", "anima.runtime", "anima.build"} <= set(firsts)
    running = {
        name: subprocess.Popen(
            [sys.executable, "-c", f"import {name}"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        for name in firsts
    }
    failed = {}
    for name, process in running.items():
        _, err = process.communicate(timeout=120)
        if process.returncode != 0:
            lines = err.decode(errors="replace").strip().splitlines()
            failed[name] = lines[-1] if lines else f"exit status {process.returncode}"
    assert failed == {}
