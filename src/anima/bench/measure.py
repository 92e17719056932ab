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
