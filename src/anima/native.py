"""Native libraries mapped without the interpreter lock, so their import does not stop the loop.

Python imports an extension module holding the interpreter lock, and the dynamic loader's work
for a large one (mapping it and its dependencies, relocations, C++ static constructors) is done
under it too: the motion thread, waking for its tick, waits for the lock. Measured on this
2-core machine (2026-12-05, ``benchmarks/import_stall.py``: a ``SCHED_FIFO`` thread ticking at
100 Hz beside one import): ``import cv2`` held the tick up 106 ms, ``import ctranslate2`` 15 ms.

:func:`preload` maps the library first through the C library's ``dlopen``, called as a foreign
function (ctypes lets go of the lock for such a call; ``ctypes.CDLL`` itself does not: 14 ms for
cv2). The import that follows finds it mapped and runs only the module's init: 1.1 ms for cv2,
1.2-1.6 ms for ctranslate2. A module whose own init is long gains nothing (onnxruntime's pybind11
init holds the lock ~19 ms: it is only ever loaded in Piper's worker process).
"""

from __future__ import annotations

import ctypes
import importlib.machinery
import importlib.util
import logging
import os
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import cast

log = logging.getLogger(__name__)

RTLD_NOW = 2  # as Python's own import maps extensions (sys.getdlopenflags())
_handles: dict[str, int] = {}  # mapped for good: never closed, so the import finds them
_lock = threading.Lock()


def preload(package: str, extension: str) -> bool:
    """Map the extension module ``extension`` of the top-level ``package`` (``"cv2", "cv2"``,
    ``"ctranslate2", "_ext"``) with the interpreter lock released, before it is imported. True
    when it is mapped (now or before, or already imported); False where it cannot be (not
    Linux, no such package or file, the loader refused: the import then maps it as usual)."""
    name = f"{package}.{extension}"
    if name in sys.modules or package in sys.modules:
        return True
    with _lock:
        if name in _handles:
            return True
    path = extension_path(package, extension)
    dlopen = _dlopen()
    if path is None or dlopen is None:
        return False
    handle = dlopen(os.fsencode(path), RTLD_NOW)  # the lock is released for the call
    if not handle:
        log.debug("could not preload %s from %s", name, path)
        return False
    with _lock:
        _handles[name] = handle
    return True


def extension_path(package: str, extension: str) -> Path | None:
    """The file of ``package``'s extension module ``extension``, found without importing
    ``package`` (a top-level package's spec is only looked up); None when there is none."""
    try:
        spec = importlib.util.find_spec(package)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    for folder in spec.submodule_search_locations:
        for suffix in importlib.machinery.EXTENSION_SUFFIXES:
            candidate = Path(folder) / f"{extension}{suffix}"
            if candidate.is_file():
                return candidate
    return None


def _dlopen() -> Callable[[bytes, int], int | None] | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        function = ctypes.CDLL(None).dlopen
    except (OSError, AttributeError):
        return None
    function.restype = ctypes.c_void_p
    function.argtypes = [ctypes.c_char_p, ctypes.c_int]
    return cast("Callable[[bytes, int], int | None]", function)
