"""`anima bench budget --quick` runs each part for real and reads finite, plausible figures.

Real subprocesses on free ports (the core loop, `anima serve` defaults — its start timed too —
and `anima serve --agent` hearing a generated quiet room), and Whisper decoding beside the real
runtime in this process.
No figure is held to a target here: benchmarks report; the bounds only say the reading is one.
"""

from __future__ import annotations

import math
import py_compile
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from anima.bench.budget.idle import ROOM_DBFS, quiet_room
from anima.bench.budget.report import Options, report_lines, run_budget_bench
from anima.bench.budget.servers import MOVING, READY
from anima.bench.budget.start import uncached_bytecode
from anima.cli import app
from anima.listening.sources.wav import read_wav

pytestmark = pytest.mark.model  # Whisper here; Piper, Silero and Whisper in the agent's process


def test_quick_budget_runs_every_part_and_reads_plausible_figures() -> None:
    r = run_budget_bench(Options.quick())

    assert [x.name for x in r.idle] == ["core", "defaults", "agent"]
    for x in r.idle:
        # /proc counts CPU in 10 ms ticks: the core's 0.5 % of a 1 s window may read 0
        assert 0 <= x.cpu.alone_pct < 200, x
        assert x.cpu.alone_pct <= x.cpu.tree_pct < 400, x
        assert x.memory.alone_mb > 20, x
        assert x.memory.alone_mb <= x.memory.tree_mb, x
        assert 0 < x.memory.tree_pss_mb <= x.memory.tree_mb, x  # shared pages split, not summed
        assert x.exit_code == 0, x
        assert x.settled_s >= 0.5, x  # the quick run's least settling was waited
    core, defaults, agent = r.idle
    assert core.cpu.children == 0
    assert defaults.cpu.children >= 1  # the embedded Mosquitto at least: the tree was read
    assert agent.check.startswith("anima agent:")  # the agent's process had the agent
    assert agent.cpu.tree_pct > 0  # listening costs ~2.5 %: at least one tick of 10 ms
    assert not defaults.check.startswith("anima agent:")

    (start,) = r.starts  # the defaults part's own start
    assert 0 < start.started.first_tick_s <= start.started.ready_s < 30
    assert start.started.first_tick_line in (MOVING, READY)
    assert start.missed >= 0
    assert math.isfinite(start.period_error_max_ms)
    assert start.exit_code == 0

    a = r.agent_start  # the agent part's own start, its models loading after the first tick
    assert a is not None
    assert 0 < a.started.first_tick_s <= a.started.ready_s < 60
    assert a.missed >= 0
    assert a.exit_code == 0

    d = r.decode
    assert d.decoding.decodes > 0
    assert d.last_text.strip()  # a real decode heard words
    for w in (d.quiet, d.decoding):
        assert w.ticks > 0
        assert math.isfinite(w.late_p99_ms)
        assert w.late_p99_ms <= w.late_max_ms
        assert w.missed >= 0

    assert r.floor.wakeups == 100  # the quick run's 1 s of the bare sleeper
    assert 0 <= r.floor.missed <= r.floor.late <= r.floor.wakeups

    text = "\n".join(report_lines(r))
    assert "NOT measured in this run" in text
    assert "first tick" in text
    assert "with --agent: first tick" in text
    assert "this machine's own floor" in text


def test_the_quiet_room_is_quiet_and_as_long_as_asked(tmp_path: Path) -> None:
    samples, rate = read_wav(quiet_room(tmp_path / "room.wav", 2.0))
    assert rate == 16_000
    assert len(samples) == 32_000
    rms_db = 20 * math.log10(math.sqrt(float((samples.astype(float) ** 2).mean())) / 32768)
    assert abs(rms_db - ROOM_DBFS) < 0.5


def test_anima_bench_budget_is_a_command_with_its_options() -> None:
    result = CliRunner().invoke(app, ["bench", "budget", "--help"])
    assert result.exit_code == 0, result.output
    for option in ("--quick", "--json", "--window", "--settle-max", "--starts", "--decode"):
        assert option in result.output


def test_the_bytecode_check_names_modules_without_a_cached_compile(tmp_path: Path) -> None:
    package = tmp_path / "budgetprobe"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "fresh.py").write_text("X = 1\n")
    (package / "compiled.py").write_text("Y = 2\n")
    py_compile.compile(str(package / "compiled.py"), doraise=True)  # beside it, in __pycache__
    sys.path.insert(0, str(tmp_path))
    try:
        got = uncached_bytecode(("budgetprobe.fresh", "budgetprobe.compiled", "no_such_module"))
    finally:
        sys.path.remove(str(tmp_path))
    assert got == ["budgetprobe.fresh"]  # a module not installed is not a compile to come
