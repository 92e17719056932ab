"""External programs: the whole process tree ends on stop, on interrupt and at the end of a step."""

from __future__ import annotations

import os
import signal
import threading
import time

import pytest

from anima.agent.actions import ActionRegistry, ActionResult
from anima.agent.context import ActionContext
from anima.agent.executor import Executor
from anima.agent.plan import parse_plan
from anima.agent.process import ManagedProcess, group_members
from anima.agent.vocabulary import builtin_registry
from anima.events import ActionStatus, StepStatus
from anima.runtime import Runtime
from anima.testing import eventually

from .conftest import Recorder

pytestmark = pytest.mark.integration

TREE = ["sh", "-c", "sleep 30 & sleep 30"]  # a shell and its children, or grandchildren


def _members_when_started(pgid: int, count: int, timeout: float = 5.0) -> list[int]:
    eventually(lambda: len(group_members(pgid)) >= count, timeout=timeout)
    return group_members(pgid)


def test_stop_ends_the_program_and_its_grandchildren() -> None:
    proc = ManagedProcess(TREE, term_timeout_s=2.0).start()
    assert proc.pid is not None
    assert os.getpgid(proc.pid) == proc.pid  # a group of its own
    assert len(_members_when_started(proc.pid, 2)) >= 2  # sh and/or two sleeps
    t0 = time.monotonic()
    code = proc.stop()
    assert time.monotonic() - t0 < 2.0  # SIGTERM was enough: no wait for the SIGKILL
    assert code == -signal.SIGTERM
    assert group_members(proc.pid) == []
    assert not proc.running
    assert proc.stop() == code  # idempotent


def test_a_program_that_ignores_sigterm_gets_sigkill() -> None:
    script = "trap '' TERM; sleep 30 & sleep 30 & wait; sleep 30"
    proc = ManagedProcess(["sh", "-c", script], term_timeout_s=0.3).start()
    assert proc.pid is not None
    _members_when_started(proc.pid, 3)
    proc.stop()
    assert group_members(proc.pid) == []


def test_exit_is_an_event_and_the_context_manager_cleans_up() -> None:
    with ManagedProcess(["sh", "-c", "exit 3"]) as proc:
        assert proc.exited.wait(5)
        assert proc.returncode == 3
    with ManagedProcess(TREE) as proc:
        pid = proc.pid
        assert pid is not None
        _members_when_started(pid, 2)
    assert group_members(pid) == []


def _tree_registry(
    pids: list[int], wait_s: float | None, spawned: threading.Event
) -> ActionRegistry:
    reg = builtin_registry()

    @reg.action()
    def detect(ctx: ActionContext) -> ActionResult:
        """Run a detector (a shell with grandchildren) until it exits or the plan is canceled."""
        proc = ctx.spawn(TREE)
        assert proc.pid is not None
        pids.append(proc.pid)
        spawned.set()
        code = ctx.wait_process(proc, wait_s)
        if ctx.canceled:  # the cancel killed the tree: its exit code is not a success
            return (False, "interrupted")
        if code is None:
            return (False, "still running")
        return (True, f"exit {code}")

    return reg


def test_interrupt_kills_the_tree_and_says_interrupted(
    executor: Executor, runtime: Runtime, recorder: Recorder
) -> None:
    pids: list[int] = []
    spawned = threading.Event()
    reg = _tree_registry(pids, None, spawned)
    task = executor.start(parse_plan(reg, ["detect()", "say('done')"]))
    running = recorder.wait_for(
        lambda e: isinstance(e, ActionStatus) and e.status == "running", timeout=5
    )
    assert isinstance(running, ActionStatus)
    assert spawned.wait(5)
    _members_when_started(pids[0], 2)
    t0 = time.monotonic()
    task.cancel("wake")
    result = task.join(5)
    assert time.monotonic() - t0 < 2.0
    assert result is not None
    assert result.outcome == "interrupted"
    assert [s.status for s in result.steps] == [StepStatus.CANCELED, StepStatus.CANCELED]
    assert result.feedback is not None
    assert result.feedback.startswith("Robot feedback: INTERRUPTED (wake)")
    assert group_members(pids[0]) == []  # nothing left running


def test_a_step_that_leaves_its_program_running_has_it_stopped(runtime: Runtime) -> None:
    pids: list[int] = []
    reg = _tree_registry(
        pids, 0.05, threading.Event()
    )  # gives up waiting: the program is still running
    result = Executor(runtime).run(parse_plan(reg, ["detect()"]), timeout=10)
    assert result.steps[0].status is StepStatus.FAILED
    assert result.steps[0].message == "still running"
    assert group_members(pids[0]) == []


def test_spawn_after_cancel_is_signalled_at_once(runtime: Runtime) -> None:
    ctx = ActionContext(runtime)
    ctx.cancel("wake")
    proc = ctx.spawn(TREE)
    assert proc.pid is not None
    assert proc.exited.wait(5)  # the hook ran at registration: SIGTERM
    ctx.reap()
    assert group_members(proc.pid) == []


def test_group_members_of_a_finished_group_is_empty() -> None:
    with ManagedProcess(["true"]) as proc:
        assert proc.exited.wait(5)
        assert proc.pid is not None
        assert group_members(proc.pid) == []
