"""The package tree's shape (issues 15 and 31): the floors hold, and every package imports first.

The floors are import-linter contracts in ``pyproject.toml`` (``[tool.importlinter]``;
docs/architecture.md lists them): each package imports only the floors below its own, the
packages of one floor import none of each other, no import cycle at any depth, the agent never
imports the runtime or the composition root, the runtime no humanoid client or server, and the
SDK and the remote ears speak the wire, not a front door. ``make test`` runs them with
``lint-imports``; here each one broken fails the test with import-linter's report.

Every ``import`` counts, those under ``TYPE_CHECKING`` and inside functions included.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import grimp
import pytest
from importlinter import api
from importlinter.application import use_cases

import anima

SRC = Path(anima.__file__).parent
ROOT = SRC.parents[1]  # where pyproject.toml is


def lint_imports(config: Path, capsys: pytest.CaptureFixture[str]) -> tuple[bool, str]:
    """What ``lint-imports`` does, in this process: whether every contract of ``config`` is
    kept, and its report (each broken contract named, with the imports that break it)."""
    capsys.readouterr()
    kept = use_cases.lint_imports(config_filename=str(config), cache_dir=None, no_logo=True)
    return kept, capsys.readouterr().out


@pytest.mark.fast
def test_every_contract_of_the_floors_is_kept(capsys: pytest.CaptureFixture[str]) -> None:
    kept, report = lint_imports(ROOT / "pyproject.toml", capsys)
    assert kept, report
    assert "0 broken" in report


@pytest.mark.fast
def test_the_contracts_state_the_floors_the_agent_and_the_clients() -> None:
    """What the floors promise stays stated: a contract cannot go missing unnoticed."""
    options = api.read_configuration(str(ROOT / "pyproject.toml"))
    assert options["session_options"]["root_packages"] == ["anima"]
    contracts = {c["name"]: c for c in options["contracts_options"]}
    floors = contracts["floors"]
    assert floors["type"] == "layers"
    assert floors["containers"] == ["anima"]
    assert floors["exhaustive"] == "True"  # a new package must be given its floor
    layers = [layer.replace(" ", "") for layer in floors["layers"]]
    assert layers[1] == "cli"
    assert "agent|runtime" in layers  # one floor: neither imports the other
    assert layers[-1] == "errors"
    assert not floors.get("ignore_imports")  # no import excused
    assert contracts["no import cycle"]["type"] == "acyclic_siblings"
    assert not contracts["no import cycle"].get("ignore_imports")
    agent = contracts["the agent never imports the runtime"]
    assert agent["type"] == "forbidden"
    assert agent["source_modules"] == ["anima.agent"]
    assert set(agent["forbidden_modules"]) >= {"anima.runtime", "anima.build"}
    assert "allow_indirect_imports" not in agent  # nor through another module
    assert contracts["the clients speak the wire, not a front door"]["type"] == "forbidden"
    assert contracts["the runtime is wired, not wiring"]["type"] == "forbidden"


@pytest.mark.fast
def test_a_broken_contract_fails_with_the_import_that_breaks_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The runner above means something only if a broken floor fails it, naming the import."""
    package = tmp_path / "twofloors"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "high.py").write_text("VALUE = 1\n")
    (package / "low.py").write_text("from twofloors import high\n\nUSED = high.VALUE\n")
    (tmp_path / ".importlinter").write_text(
        "[importlinter]\nroot_package = twofloors\n\n"
        "[importlinter:contract:floors]\nname = floors\ntype = layers\n"
        "containers = twofloors\nlayers =\n    high\n    low\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    kept, report = lint_imports(tmp_path / ".importlinter", capsys)
    assert not kept, report
    assert "floors BROKEN" in report
    assert "twofloors.low is not allowed to import twofloors.high" in report
    assert "twofloors.low -> twofloors.high (l.1)" in report


@pytest.mark.fast
def test_the_graph_sees_conditional_lazy_and_aliased_imports() -> None:
    """The contracts mean something only if import-linter's graph (grimp's) finds the imports
    they are about: under ``TYPE_CHECKING``, inside a function, ``from anima import x as y``."""
    graph = grimp.build_graph("anima", cache_dir=None)
    assert graph.direct_import_exists(importer="anima.runtime", imported="anima.commands")
    assert graph.direct_import_exists(importer="anima.runtime", imported="anima.humanoid.link")
    assert graph.direct_import_exists(importer="anima.build", imported="anima.agent.assembly")


# What each package's first import finds already loaded: the heavy third-party libraries, imported
# once in a parent that forks a child per package (an interpreter per package, ~70 of them, cost
# ~20 s of CPU); no anima module is loaded before the fork, so anima's own import order, where a
# cycle through an ``__init__`` shows, is a fresh interpreter's. Nothing that starts threads at
# import (gRPC) is preloaded: a fork keeps only the thread that forked.
_PRELOADED = ("numpy", "yaml", "pydantic", "rich", "typer", "paho.mqtt.client", "starlette", "mcp")
_FIRST_IMPORTS = """
import importlib, importlib.util, os, sys
for lib in filter(None, sys.argv[1].split(",")):
    if importlib.util.find_spec(lib.split(".")[0]) is not None:
        importlib.import_module(lib)
assert not [m for m in sys.modules if m == "anima" or m.startswith("anima.")], "anima preloaded"
sys.stdout.flush()
for name in sys.argv[2:]:
    pid = os.fork()
    if pid == 0:
        try:
            importlib.import_module(name)
        except BaseException as exc:
            print(f"{name}\t{type(exc).__name__}: {exc}", flush=True)
            os._exit(1)
        os._exit(0)
    _, status = os.waitpid(pid, 0)
    code = os.waitstatus_to_exitcode(status)
    if code not in (0, 1):  # 1: the child said why
        print(f"{name}\texit status {code}", flush=True)
"""


def first_import_failures(
    names: list[str], preloaded: tuple[str, ...], cwd: Path | None = None
) -> dict[str, str]:
    """Each of ``names`` imported first in a child of one interpreter that loaded ``preloaded``:
    the name → why, of those that failed."""
    done = subprocess.run(
        [sys.executable, "-c", _FIRST_IMPORTS, ",".join(preloaded), *names],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        cwd=cwd,
    )
    assert done.returncode == 0, done.stderr
    return dict(line.split("\t", 1) for line in done.stdout.splitlines() if "\t" in line)


@pytest.mark.integration  # an interpreter forking a child per package
def test_every_package_imports_first_in_a_fresh_interpreter() -> None:
    """A cycle through a package's ``__init__`` (which the import graph does not show: it
    counts ``from a.b import c`` as a use of ``a.b.c``) fails only when that package is the
    first thing a process imports: ``import anima.config`` once failed this way while every
    test passed. Each package, and each top-level module, first in its own process."""
    packages = {
        ".".join(("anima", *p.relative_to(SRC).parent.parts)) for p in SRC.rglob("__init__.py")
    }
    modules = {
        f"anima.{p.stem}" for p in SRC.glob("*.py") if p.stem not in ("__init__", "__main__")
    }
    firsts = sorted(packages | modules)
    assert {"anima", "anima.config", "anima.speech", "anima.runtime", "anima.build"} <= set(firsts)
    assert first_import_failures(firsts, _PRELOADED) == {}


@pytest.mark.integration  # an interpreter
def test_a_cycle_through_an_init_fails_the_first_import_check(tmp_path: Path) -> None:
    """The check itself catches what it is for: a package whose ``__init__`` imports a module
    that imports the package's ``__init__`` name back fails when imported first."""
    pkg = tmp_path / "cyclic"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("from cyclic.a import A\n")
    (pkg / "a.py").write_text("from cyclic import A as _\nA = 1\n")
    (pkg / "b.py").write_text("B = 2\n")
    failed = first_import_failures(["cyclic.b", "cyclic"], (), cwd=tmp_path)
    assert set(failed) == {"cyclic", "cyclic.b"}, failed  # b, first, goes through the cycle too
    assert all("ImportError" in why for why in failed.values()), failed


@pytest.mark.integration  # a fresh interpreter
def test_loading_the_config_imports_neither_numpy_nor_a_listening_or_speech_part() -> None:
    """Every CLI command loads a config first: it must not pay for numpy or an engine (the floors
    keep anima.listening and anima.speech out; numpy, outside the package, only a run can see)."""
    heavy = ("numpy", "anima.listening", "anima.speech")
    run = subprocess.run(
        [
            sys.executable,
            "-c",
            f"import sys, anima.config; print([m for m in {heavy!r} if m in sys.modules])",
        ],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert run.stdout.strip() == "[]", run.stderr


@pytest.mark.fast
def test_every_folder_of_modules_is_a_package() -> None:
    """A folder of modules without ``__init__.py`` is a namespace package: import-linter's graph
    leaves it out (anima.behaviour once was one, on no floor), and the wheel leaves it out too."""
    folders = {p.parent for p in SRC.rglob("*.py") if "__pycache__" not in p.parts}
    assert (
        sorted(str(f.relative_to(SRC)) for f in folders if not (f / "__init__.py").exists()) == []
    )


@pytest.mark.integration  # a fresh interpreter
def test_building_the_default_robot_leaves_the_mqtt_door_and_yaml_for_after_the_first_tick() -> (
    None
):
    """``anima serve``'s first tick waits for what :func:`anima.build.build` imports: the MQTT
    door's modules and its broker's choice (~130 ms) are made at the door's prepare, once the
    loop runs (:class:`anima.parts.Deferred`), PyYAML only when a document is read, and asyncio
    (~65 ms) when the web door's server starts. Built, not started: nothing listens, no broker
    is probed or started."""
    later = (
        "yaml", "anima.frontdoors.mqtt.frontdoor", "anima.frontdoors.mqtt.choice", "paho",
        "asyncio",
    )  # fmt: skip
    code = (
        "import sys\n"
        "from anima.build import build\n"
        "from anima.config import AnimaConfig\n"
        "runtime = build(AnimaConfig())\n"
        "assert runtime.config.mqtt.enabled and runtime.config.web.enabled\n"
        f"print([m for m in {later!r} if m in sys.modules])\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANIMA_")}
    run = subprocess.run(
        [sys.executable, "-c", code],
        check=False,
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "[]", run.stderr
