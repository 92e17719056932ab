"""anima.native: an extension's library mapped before its import, without the interpreter lock.

Each case runs in a fresh interpreter: the test process has imported most extensions already.
(What it saves the loop is a benchmark's: ``benchmarks/import_stall.py``.)"""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from anima.native import extension_path, preload

pytestmark = [
    pytest.mark.fast,
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="dlopen is Linux's here"),
]


def fresh(code: str) -> str:
    out = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True, text=True, timeout=60, check=True,
    )  # fmt: skip
    return out.stdout.strip()


def test_the_library_is_mapped_before_the_import_and_the_import_then_uses_it() -> None:
    out = fresh(
        """
        import sys
        from anima.native import extension_path, preload
        path = str(extension_path("yaml", "_yaml"))
        mapped = lambda: path in open("/proc/self/maps").read()
        print(mapped(), preload("yaml", "_yaml"), mapped(), "yaml._yaml" in sys.modules)
        import yaml._yaml
        print(yaml._yaml.__file__ == path, preload("yaml", "_yaml"))
        """
    )
    # not mapped, preloaded, mapped, not imported; then imported from that file; preloaded
    assert out.splitlines() == ["False True True False", "True True"]


def test_the_file_is_found_without_importing_the_package() -> None:
    out = fresh(
        """
        import sys
        from anima.native import extension_path
        path = extension_path("yaml", "_yaml")
        print(path.name.startswith("_yaml."), path.is_file(), "yaml" in sys.modules)
        """
    )
    assert out == "True True False"


@pytest.mark.parametrize(
    ("package", "extension"),
    [("no_such_package_here", "x"), ("json", "nothing"), ("anima", "native"), ("os", "path")],
)
def test_what_is_not_an_extension_module_is_not_preloaded(package: str, extension: str) -> None:
    # no package, a package without that extension, a Python module, a module not a package
    assert extension_path(package, extension) is None
    assert preload(package, extension) is (package in sys.modules)  # imported: nothing to do
