"""`anima serve`'s process-wide care (issue 30): SIGHUP storms merged into one reload running
and one pending, a reload that cannot open files keeping the animations there were, the soft
open-files limit raised to the hard one, and the status line's rate over its last interval.

Before: 50 SIGHUPs in 5 s ran 37 reloads at once (threads 17 → 54, +98 MB kept); a reload out
of descriptors skipped every file and left no animation; 1,024 open files was the ceiling; the
status line's rate was the whole run's average (82 Hz for 25 s after a start-up stall)."""

from __future__ import annotations

import json
import os
import resource
import signal
import subprocess
import sys
import threading
import time
from importlib.resources import files as package_files
from pathlib import Path

import pytest

from anima.cli.process import Reloads, Signals, raise_open_files_limit
from anima.cli.status import recent_rate, status_line
from anima.config import AnimaConfig, SpeechConfig
from anima.drivers.sim import SimDriver
from anima.motion.timer import LoopStats
from anima.runtime import Runtime
from anima.testing import eventually
from anima.testing.serve import ServeProcess

pytestmark = pytest.mark.integration


def test_a_storm_of_requests_is_one_reload_running_and_one_pending() -> None:
    release = threading.Event()
    started = threading.Semaphore(0)
    running = 0
    most = 0
    lock = threading.Lock()

    def reload() -> None:
        nonlocal running, most
        with lock:
            running += 1
            most = max(most, running)
        started.release()
        release.wait(5.0)
        with lock:
            running -= 1

    reloads = Reloads(reload).start()
    threads = threading.active_count()
    try:
        reloads.request()
        assert started.acquire(timeout=5.0)  # the first runs
        for _ in range(50):
            reloads.request()
        assert threading.active_count() == threads  # no thread per request
        release.set()
        assert started.acquire(timeout=5.0)  # the 50 made one more
        assert eventually(lambda: running == 0)
        assert not started.acquire(timeout=0.05)  # and no other
    finally:
        release.set()
        assert reloads.stop(timeout=5.0)
    assert reloads.runs == 2
    assert most == 1


def test_a_failing_reload_does_not_end_the_reloads() -> None:
    done = threading.Event()
    calls = 0

    def reload() -> None:
        nonlocal calls
        calls += 1
        if calls == 1:
            raise OSError(24, "Too many open files")
        done.set()

    reloads = Reloads(reload).start()
    try:
        reloads.request()
        assert eventually(lambda: calls == 1)
        reloads.request()
        assert done.wait(5.0)
    finally:
        assert reloads.stop(timeout=5.0)


def test_a_reload_out_of_descriptors_keeps_the_animations_there_were() -> None:
    runtime = Runtime(AnimaConfig(speech=SpeechConfig(enabled=False)), driver=SimDriver())
    # (not started: the reload is the subject)
    runtime.reload_animations()
    names = runtime.library.names()
    assert len(names) > 10
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    spare: list[int] = []
    try:
        highest = max(int(fd) for fd in os.listdir("/proc/self/fd"))
        resource.setrlimit(resource.RLIMIT_NOFILE, (highest + 8, hard))
        try:
            while True:  # take every descriptor left
                spare.append(os.open(os.devnull, os.O_RDONLY))
        except OSError:
            pass
        summary = runtime.reload_animations()
    finally:
        for fd in spare:
            os.close(fd)
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
    assert "reload failed (Too many open files)" in summary
    assert f"the {len(names)} loaded before are kept" in summary
    assert runtime.library.names() == names


def test_the_soft_open_files_limit_is_raised_to_the_hard_one() -> None:
    # the child lowers its own soft limit before anima is imported (as Debian's 1,024, lower):
    # a preexec_fn in this threaded process forked gRPC's poller along, which aborted the child
    code = (
        "import resource\n"
        "soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)\n"
        "resource.setrlimit(resource.RLIMIT_NOFILE, (256, hard))\n"
        "from anima.cli.process import raise_open_files_limit\n"
        "before, after = raise_open_files_limit()\n"
        "assert before == 256, before\n"
        "assert after == hard == resource.getrlimit(resource.RLIMIT_NOFILE)[0], (after, hard)\n"
    )
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    done = subprocess.run([sys.executable, "-c", code], check=False, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert raise_open_files_limit()[1] == hard  # and here, harmlessly, once more


def stats(ticks: int, elapsed_s: float) -> LoopStats:
    return LoopStats(
        ticks=ticks,
        elapsed_s=elapsed_s,
        rate_hz=(ticks - 1) / elapsed_s if elapsed_s else 0.0,
        target_hz=100.0,
        period_error_p50_ms=0.0,
        period_error_p99_ms=0.0,
        period_error_max_ms=0.0,
        missed=0,
        tick_compute_p50_us=0.0,
        tick_compute_p99_us=0.0,
        window=ticks,
    )


def test_the_status_lines_rate_is_the_last_intervals() -> None:
    # a start-up stall: 25 s for 500 ticks, then 5 s at 100 Hz
    before = stats(500, 25.0)
    now = stats(1000, 30.0)
    assert now.rate_hz < 40.0  # the whole run's average, as the status line showed it
    assert recent_rate(now, before) == 100.0
    assert recent_rate(now, now) == 0.0  # no tick in the interval: a stopped loop shows 0
    assert recent_rate(now, None) == now.rate_hz

    runtime = Runtime(AnimaConfig(speech=SpeechConfig(enabled=False)), driver=SimDriver())
    runtime.start(stepped=True)
    try:
        runtime.step(10)
        first = runtime.engine.stats()
        runtime.step(10)
        second = runtime.engine.stats()
        line = status_line(runtime, since=first, stats=second)
        rate = 10 / (second.elapsed_s - first.elapsed_s)
        assert line.startswith(f"rate {rate:.2f} Hz |"), line
        assert rate != second.rate_hz  # not the whole run's: (20 - 1) / elapsed
    finally:
        runtime.stop(ease=False)


def test_a_storm_of_sighups_then_a_sigterm_is_read_by_the_wait() -> None:
    # before, each SIGHUP's handler called Event.set: under load one ran inside another's
    # (a handler runs between any two bytecodes, even a handler's), which waited for ever for
    # the lock its own thread held; the SIGTERM after it was logged and never acted on
    hups = 0

    def on_hup() -> None:
        nonlocal hups
        hups += 1

    before = signal.getsignal(signal.SIGTERM)
    signals = Signals(on_hup).install()
    try:
        for _ in range(50):
            os.kill(os.getpid(), signal.SIGHUP)
        # read in the wait, not in a handler: one request per batch read (Reloads merges them)
        assert eventually(lambda: not signals.wait(0.0) and hups >= 1)
        assert hups <= 50
        os.kill(os.getpid(), signal.SIGTERM)
        assert signals.wait(5.0)
    finally:
        signals.close()
    assert signal.getsignal(signal.SIGTERM) == before  # given back


def test_a_sigterm_another_thread_takes_still_wakes_the_wait() -> None:
    # the kernel gives a process's signal to any thread not blocking it; under load often not
    # the main one, whose timed wait (Event.wait) then slept on, its handler not yet run
    signals = Signals(lambda: None).install()
    done = threading.Event()
    other = threading.Thread(target=done.wait, args=(10.0,), name="takes-the-signal")
    other.start()
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})  # this thread cannot take it
    try:
        os.kill(os.getpid(), signal.SIGTERM)
        started = time.monotonic()
        assert signals.wait(30.0)
        assert time.monotonic() - started < 20.0  # woken by the signal, not the timeout
    finally:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM})
        done.set()
        other.join(5.0)
        signals.close()


def test_a_sighup_storm_on_anima_serve_runs_few_reloads(tmp_path: Path) -> None:
    # a reload long enough for signals to arrive during it on any machine: the shipped 16
    # animations took 4-5 ms on a fast hour, and then each SIGHUP 5 ms apart had its own
    many = tmp_path / "many"
    many.mkdir()
    shipped = sorted((package_files("anima.animation") / "data").iterdir(), key=str)
    xmls = [f for f in shipped if f.name.endswith(".xml")]
    for i in range(20):
        for f in xmls:
            (many / f"copy{i}_{f.name}").write_bytes(f.read_bytes())
    env: dict[str, str | None] = {
        "ANIMA_MQTT__ENABLED": "false", "ANIMA_WEB__ENABLED": "false",
        "XDG_RUNTIME_DIR": str(tmp_path), "ANIMA_LOG_LEVEL": "INFO",
        "ANIMA_SPEECH__ENABLED": "false",  # no voice to load: the reloads are the subject
        "ANIMA_SERVE__SHUTDOWN_S": "0.1", "ANIMA_CONFIG": None,
        "ANIMA_ANIMATION__FOLDERS": json.dumps([str(many)]),
    }  # fmt: skip
    serve = ServeProcess(env=env, cwd=tmp_path)
    try:
        serve.wait_for("^anima ready")
        for _ in range(50):  # 5 ms apart: each is handled, none is merged by the kernel
            os.kill(serve.pid, signal.SIGHUP)
            time.sleep(0.005)
        time.sleep(0.5)  # the pending reload runs: tens of ms
    finally:
        code = serve.stop(10)
    out = "".join(serve.lines)
    assert code == 0, out
    reloads = out.count("animations: ")
    # one reload at a time, the signals during it merged into one pending: with a reload of
    # 336 files (tens of ms) and signals 5 ms apart, a few; one per SIGHUP would be 51
    assert 1 <= reloads <= 25, out
    assert "Traceback" not in out
