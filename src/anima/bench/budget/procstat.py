"""CPU time and resident memory of a process, alone and with its process tree, from ``/proc``.

CPU is read as the kernel accounts it (``utime + stime`` of ``/proc/<pid>/stat``, in clock
ticks of 10 ms), never sampled: over a 20 s window one tick is 0.05 % of a core. A process's
*tree* adds every live descendant (a Piper worker, the embedded Mosquitto broker) and the CPU
of the children it reaped during the window (``cutime + cstime``), so work moved into a child
process is still counted against the robot that spawned it.
"""

from __future__ import annotations

import math
import os
import time
from dataclasses import dataclass
from pathlib import Path

from anima.bench.measure import proc_kb_field_mb, rss_mb

_TICK_S = 1.0 / os.sysconf("SC_CLK_TCK")


@dataclass(frozen=True)
class _Stat:
    ppid: int
    own_s: float  # utime + stime
    reaped_s: float  # cutime + cstime: children that ended and were waited for


def _stat(pid: int) -> _Stat | None:
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # the command name (field 2) is in parentheses and may hold spaces: split after its end
    fields = text[text.rindex(")") + 2 :].split()
    ppid, utime, stime, cutime, cstime = (int(fields[i]) for i in (1, 11, 12, 13, 14))
    return _Stat(ppid, (utime + stime) * _TICK_S, (cutime + cstime) * _TICK_S)


def descendants(pid: int) -> list[int]:
    """Every live process below ``pid`` (children, their children, …)."""
    parents: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and (s := _stat(int(entry.name))) is not None:
            parents.setdefault(s.ppid, []).append(int(entry.name))
    found: list[int] = []
    todo = [pid]
    while todo:
        kids = parents.get(todo.pop(), [])
        found += kids
        todo += kids
    return found


@dataclass(frozen=True)
class CpuSnapshot:
    at: float  # time.monotonic()
    own_s: float  # the process alone
    reaped_s: float  # its reaped children
    children_s: dict[int, float]  # live descendant pid → its own CPU seconds


def snapshot(pid: int) -> CpuSnapshot:
    root = _stat(pid)
    if root is None:
        raise ProcessLookupError(f"process {pid} is gone")
    kids = {k: s.own_s for k in descendants(pid) if (s := _stat(k)) is not None}
    return CpuSnapshot(time.monotonic(), root.own_s, root.reaped_s, kids)


@dataclass(frozen=True, kw_only=True)
class CpuUse:
    """Percent of one core over a window."""

    window_s: float
    alone_pct: float  # the process's own threads
    tree_pct: float  # with its child processes
    children: int  # live child processes at the window's end

    def text(self) -> str:
        kids = f" ({self.children} child processes)" if self.children else ""
        return (
            f"{self.alone_pct:5.2f} % alone, {self.tree_pct:5.2f} % with children{kids} "
            f"over {self.window_s:.0f} s"
        )


def cpu_between(a: CpuSnapshot, b: CpuSnapshot) -> CpuUse:
    """CPU use from ``a`` to ``b``: a child born in between counts from zero (all its CPU fell
    in the window); one that ended and was reaped counts through its parent's ``cutime``."""
    span = b.at - a.at
    own = b.own_s - a.own_s
    kids = sum(s - a.children_s.get(k, 0.0) for k, s in b.children_s.items())
    tree = own + kids + (b.reaped_s - a.reaped_s)
    return CpuUse(
        window_s=span,
        alone_pct=100.0 * own / span,
        tree_pct=100.0 * tree / span,
        children=len(b.children_s),
    )


def measure_cpu(pid: int, window_s: float) -> CpuUse:
    """CPU use of ``pid`` over the next ``window_s`` seconds."""
    a = snapshot(pid)
    time.sleep(window_s)
    return cpu_between(a, snapshot(pid))


@dataclass(frozen=True, kw_only=True)
class Memory:
    alone_mb: float  # VmRSS of the process
    tree_mb: float  # summed over it and its live descendants (shared pages counted in each)
    tree_pss_mb: float  # proportional set size summed: each shared page split among its users


def pss_mb(pid: int) -> float:
    """Proportional set size of ``pid`` in MB (``/proc/<pid>/smaps_rollup``); NaN if unread."""
    return proc_kb_field_mb(pid, "smaps_rollup", "Pss:")


def memory(pid: int) -> Memory:
    tree = [pid, *descendants(pid)]
    alone = rss_mb(pid)
    rss = [m for k in tree[1:] if not math.isnan(m := rss_mb(k))]
    pss = [m for k in tree if not math.isnan(m := pss_mb(k))]
    return Memory(alone_mb=alone, tree_mb=alone + sum(rss), tree_pss_mb=sum(pss))
