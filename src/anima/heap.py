"""Giving the heap's freed memory back to the system.

Loading a model frees as much as it keeps: CTranslate2 reads Whisper tiny.en's float16 weights
and converts them to int8, and its first encode sizes work buffers; glibc's ``malloc`` keeps
what was freed in its arenas for reuse, so the process's resident memory stays at its peak
(measured: ``WhisperAsr.load()`` 34 → 224 MB resident, 177 MB after :func:`release`). Nothing
is lost by returning it: the next allocation asks the system again.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
from typing import Any


@functools.cache
def _malloc_trim() -> Any:
    """glibc's ``malloc_trim``, or None where the C library has none (musl, macOS)."""
    name = ctypes.util.find_library("c")
    try:
        trim = getattr(ctypes.CDLL(name), "malloc_trim", None) if name is not None else None
    except OSError:
        return None
    if trim is not None:
        trim.argtypes = [ctypes.c_size_t]
        trim.restype = ctypes.c_int
    return trim


def release() -> bool:
    """Return the free memory of every ``malloc`` arena to the system (glibc's
    ``malloc_trim(0)``; the interpreter lock is released meanwhile: a ctypes call). False where
    the C library cannot."""
    trim = _malloc_trim()
    if trim is None:
        return False
    trim(0)
    return True
