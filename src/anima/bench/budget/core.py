"""The budget's "core": the motion loop alone in its own process, for its idle CPU.

``python -m anima.bench.budget.core`` runs the shipped body on the :class:`SimDriver` through a
:class:`MotionEngine` at the configured rate on the real clock, with the interpreter's switch
interval that the runtime sets — no doors, speech, agent or animations loaded — prints
:data:`MOVING` once the loop runs, and stops when its standard input closes. What ``anima
serve`` costs above this is everything else it runs.
"""

from __future__ import annotations

import subprocess
import sys

from anima.body import load_body
from anima.config import MotionConfig
from anima.drivers.sim import SimDriver
from anima.motion.engine import MotionEngine
from anima.motion.priority import SwitchInterval

MOVING = "core moving"


def main() -> None:
    config = MotionConfig()
    driver = SimDriver(history=16)
    driver.connect()
    engine = MotionEngine(load_body(), driver, config=config)
    switch = SwitchInterval(config.switch_interval_ms)
    switch.apply()
    engine.start()
    try:
        sys.stdout.write(MOVING + "\n")
        sys.stdout.flush()
        sys.stdin.read()  # until the parent closes the pipe
    finally:
        engine.stop()
        switch.restore()
        driver.disconnect()


def spawn() -> subprocess.Popen[str]:
    """The core in a child process, started; returns once it printed :data:`MOVING`."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "anima.bench.budget.core"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    line = proc.stdout.readline()
    if line.strip() != MOVING:
        proc.kill()
        proc.wait()
        raise RuntimeError(f"anima.bench.budget.core did not start (printed {line!r})")
    return proc


def stop(proc: subprocess.Popen[str], timeout: float = 10.0) -> int:
    """Close its standard input (it stops its loop and exits); the exit code."""
    assert proc.stdin is not None
    assert proc.stdout is not None
    proc.stdin.close()
    try:
        code = proc.wait(timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        code = proc.wait()
    proc.stdout.close()
    return code


if __name__ == "__main__":
    main()
