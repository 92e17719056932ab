"""Idle CPU and memory of the three configurations the budget compares.

- **core**: the motion loop alone (:mod:`anima.bench.budget.core`) — the floor;
- **defaults**: ``anima serve`` as shipped (doors, speech, the embedded broker as its child);
- **agent**: ``anima serve --agent`` hearing a quiet room: ``--audio-in`` a WAV of pink noise at
  :data:`ROOM_DBFS`, which ``anima serve`` plays at real time once (not looped), so the file
  lasts the start, the settling and the window with :data:`SPARE_S` to spare.

Each is measured over ``window_s`` (the process alone and with its child processes) once it has
started (``anima ready``, or the core's first tick) and settled: ``settle_s``, then until a
:data:`SAMPLE_S` sample of its tree's CPU is under :data:`SETTLED_PCT`, for at most
``settle_max_s``. ``anima ready`` does not mean loaded: the agent went on loading at 50-63 % of a
core for ~12 s after it (then 4.6-5.8 %), which a fixed 3 s settle measured as idle (23 %).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from anima.audio import SAMPLE_RATE
from anima.bench.budget import core
from anima.bench.budget.procstat import CpuUse, Memory, measure_cpu, memory
from anima.bench.budget.servers import AGENT, start_serve, stop_serve, wait_started
from anima.bench.budget.start import Start, first_status
from anima.listening.sources.wav import write_wav

ROOM_DBFS = -55.0  # RMS of the quiet room's noise, relative to full scale
SPARE_S = 60.0  # of room noise beyond settle + window: the agent's start (models load) fits in it
START_TIMEOUT_S = 60.0
SETTLED_PCT = 20.0  # of one core: above this a process is still loading, not idle
SAMPLE_S = 2.0


@dataclass(frozen=True, kw_only=True)
class Idle:
    name: str  # core, defaults or agent
    settled_s: float  # from started to the window's start
    settled: bool  # a sample was under SETTLED_PCT (False: settle_max_s ran out first)
    cpu: CpuUse
    memory: Memory  # after the window
    check: str  # what shows the part ran as described (the agent's line, the core's)
    exit_code: int


def quiet_room(path: Path, seconds: float, seed: int = 0) -> Path:
    """``seconds`` of pink noise (power ∝ 1/f, no DC) at :data:`ROOM_DBFS`, 16 kHz mono."""
    n = int(seconds * SAMPLE_RATE)
    spectrum = np.fft.rfft(np.random.default_rng(seed).standard_normal(n))
    f = np.fft.rfftfreq(n, 1.0 / SAMPLE_RATE)
    spectrum[0] = 0.0
    spectrum[1:] /= np.sqrt(f[1:])
    x = np.fft.irfft(spectrum, n)
    x *= 32768.0 * 10 ** (ROOM_DBFS / 20) / np.sqrt(np.mean(x**2))
    write_wav(path, np.round(x).astype(np.int16))
    return path


def settle(pid: int, least_s: float, most_s: float) -> tuple[float, bool]:
    """Wait ``least_s``, then until a sample of the tree's CPU is under :data:`SETTLED_PCT`
    (at most ``most_s`` in all): the seconds waited, and whether it settled."""
    begin = time.monotonic()
    time.sleep(least_s)
    while (waited := time.monotonic() - begin) + SAMPLE_S <= most_s:
        if measure_cpu(pid, SAMPLE_S).tree_pct < SETTLED_PCT:
            return time.monotonic() - begin, True
    return waited, False


def idle_core(settle_s: float, settle_max_s: float, window_s: float) -> Idle:
    proc = core.spawn()
    try:
        settled_s, settled = settle(proc.pid, settle_s, settle_max_s)
        cpu = measure_cpu(proc.pid, window_s)
        mem = memory(proc.pid)
    finally:
        code = core.stop(proc)
    return Idle(
        name="core", settled_s=settled_s, settled=settled, cpu=cpu, memory=mem,
        check=core.MOVING, exit_code=code,
    )  # fmt: skip


def idle_serve(
    workdir: Path,
    *,
    agent: bool,
    settle_s: float,
    settle_max_s: float,
    window_s: float,
    timed_status_s: float | None = None,
) -> tuple[Idle, Start | None]:
    """``anima serve`` (with ``--agent`` hearing the quiet room when ``agent``) at rest; given
    ``timed_status_s``, also how that same process started (:mod:`~anima.bench.budget.start`:
    its first status line, printed that many seconds after the start, is read after the window,
    so it costs no wait when the window is longer). A quick run's start figure comes from here:
    one ``anima serve`` fewer to start."""
    extra: list[str] = []
    if agent:
        room = quiet_room(workdir / "quiet-room.wav", settle_max_s + window_s + SPARE_S)
        extra = ["--agent", "--audio-in", str(room)]
    spawned = time.monotonic()
    server = start_serve(workdir, extra, status_interval_s=timed_status_s)
    try:
        started = wait_started(server, spawned, START_TIMEOUT_S)
        settled_s, settled = settle(server.pid, settle_s, settle_max_s)
        cpu = measure_cpu(server.pid, window_s)
        mem = memory(server.pid)
        status = first_status(server) if timed_status_s is not None else None
    finally:
        code = stop_serve(server)
    start = None
    if status is not None:
        missed, worst_ms = status
        start = Start(started=started, missed=missed, period_error_max_ms=worst_ms, exit_code=code)
    said = [line.strip() for line in server.lines if line.startswith(AGENT)]
    if agent and not said:
        raise RuntimeError("anima serve --agent printed no 'anima agent:' line: no agent ran")
    check = said[0] if said else "no agent line (as expected)"
    idle = Idle(
        name="agent" if agent else "defaults", settled_s=settled_s, settled=settled, cpu=cpu,
        memory=mem, check=check, exit_code=code,
    )  # fmt: skip
    return idle, start
