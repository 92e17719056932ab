"""Idle CPU and memory of the three configurations the budget compares.

- **core**: the motion loop alone (:mod:`anima.bench.budget.core`) — the floor;
- **defaults**: ``anima serve`` as shipped (doors, speech, the embedded broker as its child);
- **agent**: ``anima serve --agent`` hearing a quiet room: ``--audio-in`` a WAV of pink noise at
  :data:`ROOM_DBFS`, which ``anima serve`` plays at real time once (not looped), so the file
  lasts the start, the settling and the window with :data:`SPARE_S` to spare.

Each is measured after it has started (``anima ready``, or the core's first tick) and settled
for ``settle_s``, over ``window_s``: the process alone and with its child processes.
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
from anima.listening.sources.wav import write_wav

ROOM_DBFS = -55.0  # RMS of the quiet room's noise, relative to full scale
SPARE_S = 60.0  # of room noise beyond settle + window: the agent's start (models load) fits in it
START_TIMEOUT_S = 60.0


@dataclass(frozen=True, kw_only=True)
class Idle:
    name: str  # core, defaults or agent
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


def idle_core(settle_s: float, window_s: float) -> Idle:
    proc = core.spawn()
    try:
        time.sleep(settle_s)
        cpu = measure_cpu(proc.pid, window_s)
        mem = memory(proc.pid)
    finally:
        code = core.stop(proc)
    return Idle(name="core", cpu=cpu, memory=mem, check=core.MOVING, exit_code=code)


def idle_serve(workdir: Path, *, agent: bool, settle_s: float, window_s: float) -> Idle:
    """``anima serve`` (with ``--agent`` hearing the quiet room when ``agent``) at rest."""
    extra: list[str] = []
    if agent:
        room = quiet_room(workdir / "quiet-room.wav", settle_s + window_s + SPARE_S)
        extra = ["--agent", "--audio-in", str(room)]
    spawned = time.monotonic()
    server = start_serve(workdir, extra)
    try:
        wait_started(server, spawned, START_TIMEOUT_S)
        time.sleep(settle_s)
        cpu = measure_cpu(server.pid, window_s)
        mem = memory(server.pid)
    finally:
        code = stop_serve(server)
    said = [line.strip() for line in server.lines if line.startswith(AGENT)]
    if agent and not said:
        raise RuntimeError("anima serve --agent printed no 'anima agent:' line: no agent ran")
    check = said[0] if said else "no agent line (as expected)"
    return Idle(
        name="agent" if agent else "defaults", cpu=cpu, memory=mem, check=check, exit_code=code
    )
