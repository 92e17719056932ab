"""``anima bench floor``: how late this machine wakes a real-time thread, with no anima in it.

A thread asks for ``SCHED_FIFO`` (as the motion thread does, :func:`~anima.motion.priority.
make_realtime`; where it is refused it runs at normal priority, and says so) and a 1 µs timer
slack, then sleeps to absolute deadlines every ``period`` (10 ms) for ``seconds``, doing nothing
else, with no other thread of the process running: each wake-up's lateness is the machine's
alone — the kernel's, and on a virtual machine the hypervisor's. A wake-up a whole period late
is a deadline any loop here would have missed, whatever it does: the floor under every "0 missed
ticks" figure of the other benchmarks. (On these 2-core VMs, 2026-12-05: 1 in 120 s, then 3 in
180 s, the worst 20 ms late; `anima bench loop` in the same hour missed 11 in 240 s.)
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass

from anima.motion.priority import make_realtime, set_timer_slack

LATE_S = 0.002  # a wake-up later than this is counted as late


@dataclass(frozen=True, kw_only=True)
class FloorResult:
    seconds: float
    period_s: float
    wakeups: int
    late: int  # wake-ups later than LATE_S
    missed: int  # wake-ups a whole period late or more: deadlines a loop would have missed
    worst_ms: float
    p99_ms: float
    realtime: str  # "SCHED_FIFO", or why not

    def line(self) -> str:
        return (
            f"{self.wakeups} wake-ups every {self.period_s * 1000:g} ms over {self.seconds:g} s "
            f"({self.realtime}): {self.late} later than {LATE_S * 1000:g} ms, {self.missed} a "
            f"whole period late (missed), lateness p99 {self.p99_ms:.3f} ms, worst "
            f"{self.worst_ms:.2f} ms"
        )


def run_floor_bench(seconds: float = 60.0, period_s: float = 0.01) -> FloorResult:
    """Sleep to each deadline on a thread of its own (see the module docstring)."""
    if not (0.1 <= seconds <= 3600 and 0.001 <= period_s <= 1.0):
        raise ValueError("seconds must be 0.1-3600 and period_s 0.001-1")
    lateness: list[float] = []
    why: list[str] = []

    def sleeper() -> None:
        refused = make_realtime(10)
        why.append("SCHED_FIFO" if refused is None else f"normal priority: {refused}")
        set_timer_slack(1_000)
        n = round(seconds / period_s)
        t0 = time.monotonic()
        for k in range(1, n + 1):
            due = t0 + k * period_s
            wait = due - time.monotonic()
            if wait > 0:
                time.sleep(wait)
            lateness.append(max(0.0, time.monotonic() - due))

    thread = threading.Thread(target=sleeper, name="anima-bench-floor")
    thread.start()
    thread.join()
    ordered = sorted(lateness)
    return FloorResult(
        seconds=seconds,
        period_s=period_s,
        wakeups=len(lateness),
        late=sum(x > LATE_S for x in lateness),
        missed=sum(x >= period_s for x in lateness),
        worst_ms=1000 * ordered[-1] if ordered else 0.0,
        p99_ms=1000 * ordered[min(len(ordered) - 1, int(0.99 * len(ordered)))] if ordered else 0.0,
        realtime=why[0] if why else "not run",
    )
