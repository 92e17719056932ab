"""The motion tick compiled to C with mypyc, used when built for exactly these sources.

The modules the tick runs through (:data:`MODULES`) are plain, fully typed Python. mypyc (part
of mypy) compiles them to C extension modules with the same behaviour: frames bit for bit the
same (``tests/motion/test_compiled.py``). In the loop, after each 10 ms sleep, the compiled tick
costs about half as much (``anima bench loop``: p50 31-44 µs against 59-66 µs for the same
scene, 2026-12-05, docs/motion.md).

A build lives outside the source tree, under ``<venv>/anima-native/<fingerprint>``, where the
fingerprint hashes the sources of this package and of every module its classes come from, and
the interpreter's extension suffix. ``anima/motion/__init__.py`` calls :func:`activate` first:
when a build for the sources as they are exists, its directory goes first on the package's
``__path__``; otherwise the plain modules run. An edited source therefore never runs stale
compiled code: it runs as plain Python until built again. ``ANIMA_PURE_PYTHON=1`` runs plain
Python whatever is built.

Built by ``scripts/bootstrap.sh`` (``make run``, ``make test``) with ``anima compile``: ~30 s
on a 2-core machine, skipped when built already. It needs a C compiler and Python's headers
(Debian: ``gcc``, ``python3-dev``) and mypy (the ``native`` extra), and says which is missing.
Nothing here is imported by the compiled modules: this module stays plain Python.
"""

from __future__ import annotations

import hashlib
import importlib
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path

# the modules the tick runs through; moves.py and idle.py stay plain: they hold the protocols
# (runtime-checkable, which mypyc does not compile) that plug-in moves and layers implement
MODULES = (
    "engine",
    "hooks",
    "idle_mix",
    "inbox",
    "minjerk",
    "offsets",
    "output",
    "overrides",
    "primary",
    "safety",
    "so3",
    "taps",
)
# besides this package, the sources whose types the compiled code relies on
_DEPENDS = ("body", "config", "clock.py", "drivers/base.py", "errors.py", "events.py")
_DISABLE = "ANIMA_PURE_PYTHON"
_MANIFEST = "built.json"
_HERE = Path(__file__).resolve().parent
_ANIMA = _HERE.parent

_state: dict[str, str] = {"tick": "plain Python", "why": "not activated"}


def _sources() -> list[Path]:
    files = list(_HERE.glob("*.py"))
    for dep in _DEPENDS:
        path = _ANIMA / dep
        files.extend(path.rglob("*.py") if path.is_dir() else [path])
    return sorted(files)


def fingerprint() -> str:
    """What a build must match: these sources, byte for byte, and the interpreter's ABI."""
    digest = hashlib.sha256(str(sysconfig.get_config_var("EXT_SUFFIX")).encode())
    for path in _sources():
        digest.update(str(path.relative_to(_ANIMA)).encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:20]


def native_root() -> Path:
    return Path(sys.prefix) / "anima-native"


def activate(package_path: list[str]) -> str | None:
    """Put the build for these sources first on ``package_path`` (the package's ``__path__``);
    return its directory, or None when plain Python runs (:func:`status` says why). A build
    whose files are not as it made them, or whose library does not load, is not used."""
    if disabled():
        _state.update(tick="plain Python", why=f"{_DISABLE} is set")
        return None
    try:
        build = native_root() / fingerprint()
    except OSError as exc:
        _state.update(tick="plain Python", why=f"cannot read the sources: {exc}")
        return None
    manifest = build / _MANIFEST
    if not manifest.is_file():
        _state.update(tick="plain Python", why="not built for these sources: anima compile")
        return None
    try:
        made = json.loads(manifest.read_text(encoding="utf-8"))
        for name, size in made["files"].items():
            if (build / name).stat().st_size != size:
                raise ValueError(f"{name} is not the size it was built")
    except (OSError, ValueError, LookupError, TypeError, AttributeError) as exc:
        why = f"the build is damaged ({exc}): anima compile --force"
        _state.update(tick="plain Python", why=why)
        return None
    package_path.insert(0, str(build / "anima" / "motion"))
    sys.path.append(str(build))  # mypyc's shared library is a top-level module
    try:
        importlib.import_module(made["library"])
    except Exception as exc:  # a library that does not load: plain Python, said why
        package_path.remove(str(build / "anima" / "motion"))
        sys.path.remove(str(build))
        why = f"the build does not load ({exc!r}): anima compile --force"
        _state.update(tick="plain Python", why=why)
        return None
    _state.update(tick="compiled (mypyc)", why=str(build))
    return str(build)


def disabled() -> bool:
    """Plain Python asked for (``ANIMA_PURE_PYTHON`` set, and not to 0), whatever is built."""
    return os.environ.get(_DISABLE, "") not in ("", "0")


def status() -> str:
    """How the tick runs: ``compiled (mypyc)`` and where, or ``plain Python`` and why."""
    return f"{_state['tick']} ({_state['why']})"


def compiled() -> bool:
    """True when the motion modules run compiled (the engine imported is the build's)."""
    engine = sys.modules.get("anima.motion.engine")
    if engine is not None:
        return not str(engine.__file__).endswith(".py")
    return _state["tick"].startswith("compiled")


# --- building -------------------------------------------------------------------------------------
class BuildError(Exception):
    """What keeps the compiled tick from being built, said so a person can fix it."""


def _check_tools() -> None:
    missing = []
    compiler = (sysconfig.get_config_var("CC") or "cc").split()[0]
    if shutil.which(compiler) is None:
        missing.append("a C compiler (Debian: gcc)")
    include = Path(sysconfig.get_paths()["include"]) / "Python.h"
    if not include.is_file():
        missing.append(f"Python's headers ({include}; Debian: python3-dev)")
    try:
        import mypyc  # noqa: F401  # only to say it is missing
    except ImportError:
        missing.append("mypy with mypyc (pip install 'anima[native]')")
    if missing:
        raise BuildError("the compiled motion tick needs " + ", ".join(missing))


def build(*, force: bool = False, quiet: bool = False) -> Path:
    """Compile :data:`MODULES` for the sources as they are (skipped when built already);
    return the build's directory. Older builds are removed."""
    target = native_root() / fingerprint()
    if (target / _MANIFEST).is_file() and not force:
        return target
    _check_tools()
    began = time.monotonic()
    if not quiet:
        print(f"compiling the motion tick with mypyc ({len(MODULES)} modules, ~30 s)", flush=True)
    native_root().mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=native_root(), prefix=".build-") as tmp:
        work = Path(tmp)
        shutil.copytree(_ANIMA, work / "src" / "anima", ignore=_not_python)
        names = [f"anima/motion/{m}.py" for m in MODULES]
        done = subprocess.run(
            [sys.executable, "-m", "mypyc", *names],
            cwd=work / "src",
            capture_output=True,
            text=True,
            check=False,
            env=dict(os.environ, MYPY_CACHE_DIR=str(work / "cache")),
        )
        if done.returncode != 0:
            tail = "\n".join((done.stdout + done.stderr).strip().splitlines()[-15:])
            raise BuildError(f"mypyc failed (exit {done.returncode}):\n{tail}")
        staged = work / "out"
        (staged / "anima" / "motion").mkdir(parents=True)
        suffix = str(sysconfig.get_config_var("EXT_SUFFIX"))
        (lib,) = (work / "src").glob(f"*__mypyc{suffix}")  # one group: one shared library
        made = [lib] + [work / "src" / "anima" / "motion" / f"{m}{suffix}" for m in MODULES]
        files = {}
        for path in made:
            name = str(path.relative_to(work / "src"))
            shutil.copy2(path, staged / name)
            files[name] = path.stat().st_size
        manifest = {
            "fingerprint": target.name,
            "library": lib.name.removesuffix(suffix),
            "files": files,
            "modules": list(MODULES),
            "mypy": _version("mypy"),
            "python": sys.version.split()[0],
            "built": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
            "seconds": round(time.monotonic() - began, 1),
        }
        (staged / _MANIFEST).write_text(json.dumps(manifest, indent=1) + "\n")
        shutil.rmtree(target, ignore_errors=True)
        staged.rename(target)
    for old in native_root().iterdir():
        if old != target and not old.name.startswith("."):
            shutil.rmtree(old, ignore_errors=True)
    if not quiet:
        print(f"compiled the motion tick in {time.monotonic() - began:.0f} s: {target}", flush=True)
    return target


def _not_python(directory: str, names: list[str]) -> set[str]:
    """What the build's copy of the sources leaves out: everything but Python sources."""
    here = Path(directory)
    keep = (n for n in names if n.endswith(".py") or (here / n).is_dir())
    return set(names) - set(keep) | ({"__pycache__"} & set(names))


def _version(package: str) -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(package)
    except PackageNotFoundError:
        return "unknown"
