"""What the benchmarks share: percentiles of samples, and a process's resident memory."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np


def percentile(values: list[float], q: float) -> float:
    """The ``q``-th percentile of ``values`` (NaN when there are none)."""
    return float(np.percentile(values, q)) if values else math.nan


def rss_mb(pid: int | str = "self") -> float:
    """Resident memory of process ``pid`` (this one by default) in MB; NaN off Linux."""
    return proc_kb_field_mb(pid, "status", "VmRSS:")


def proc_kb_field_mb(pid: int | str, name: str, key: str) -> float:
    """A ``key  N kB`` line of ``/proc/<pid>/<name>`` in MB; NaN when it cannot be read."""
    try:
        for line in Path(f"/proc/{pid}/{name}").read_text().splitlines():
            if line.startswith(key):
                return int(line.split()[1]) / 1024.0
    except OSError:
        pass
    return math.nan


def python_speed_ms(additions: int = 1_000_000) -> float:
    """Milliseconds this machine takes for ``additions`` pure-Python additions now (the best of
    three): a bench prints it beside CPU figures, which scale with it. This VM's speed varies
    1.5–4× hour to hour (1e6 additions: ~200 ms in its slow hours of 2026-12-05)."""
    import time

    best = math.inf
    for _ in range(3):
        began = time.perf_counter()
        total = 0
        for i in range(additions):
            total += i
        best = min(best, time.perf_counter() - began)
    return best * 1000.0
