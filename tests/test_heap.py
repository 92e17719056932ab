"""anima.heap: the heap's freed memory goes back to the system (glibc's malloc_trim)."""

from __future__ import annotations

import ctypes
import ctypes.util
import platform

import pytest

from anima import heap
from anima.bench.measure import rss_mb

pytestmark = pytest.mark.fast


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="malloc_trim is glibc's")
def test_freed_holes_in_the_heap_are_given_back() -> None:
    libc = ctypes.CDLL(ctypes.util.find_library("c"))
    libc.malloc.restype = ctypes.c_void_p
    libc.malloc.argtypes = [ctypes.c_size_t]
    libc.free.argtypes = [ctypes.c_void_p]
    size = 60_000  # under malloc's mmap threshold: from its heap
    blocks = []
    try:
        for _ in range(1600):
            block = libc.malloc(size)
            ctypes.memset(block, 1, size)  # resident
            blocks.append(block)
        for block in blocks[::2]:  # every other one: holes between the kept, not the heap's top
            libc.free(block)  # ~48 MB freed, still resident: glibc keeps holes for reuse
        before = rss_mb()
        assert heap.release()
        after = rss_mb()
    finally:
        for block in blocks[1::2]:
            libc.free(block)
    assert before - after > 30, (before, after)


def test_release_is_a_no_op_where_the_c_library_cannot(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(heap, "_malloc_trim", lambda: None)
    assert heap.release() is False
