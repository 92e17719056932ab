"""The seed's result protocol, failure policy, finish, and the feedback summary."""

from __future__ import annotations

import pytest

from anima.agent.actions import ActionRegistry, ActionResult
from anima.agent.context import ActionContext
from anima.agent.executor import Executor, interpret, summarize
from anima.agent.plan import parse_plan
from anima.agent.vocabulary import builtin_registry
from anima.errors import CommandRefusedError
from anima.events import StepStatus
from anima.runtime import Runtime

pytestmark = pytest.mark.fast


def _registry() -> ActionRegistry:
    reg = builtin_registry()

    @reg.action()
    def quiet(ctx: ActionContext) -> ActionResult:
        """Self-feedback: nothing to report."""
        return None

    @reg.action()
    def ok(ctx: ActionContext) -> ActionResult:
        """Plain success."""
        return True

    @reg.action()
    def count(ctx: ActionContext, n: int) -> ActionResult:
        """Success with a result."""
        return (True, f"found {n}")

    @reg.action()
    def refuse(ctx: ActionContext) -> ActionResult:
        """Failure with a reason."""
        return (False, "the door is locked")

    @reg.action()
    def falsy(ctx: ActionContext) -> ActionResult:
        """Bare False."""
        return False

    @reg.action()
    def odd(ctx: ActionContext) -> ActionResult:
        """An unexpected value."""
        return 42  # type: ignore[return-value]

    @reg.action()
    def refused(ctx: ActionContext) -> ActionResult:
        """An anima error."""
        raise CommandRefusedError("shutting down")

    @reg.action()
    def buggy(ctx: ActionContext) -> ActionResult:
        """A bug."""
        raise RuntimeError("boom")

    return reg


@pytest.mark.parametrize(
    ("value", "status", "message"),
    [
        (None, StepStatus.SELF_FEEDBACK, ""),
        (True, StepStatus.SUCCEEDED, ""),
        ((True, "done"), StepStatus.SUCCEEDED, "done"),
        ([True, "done"], StepStatus.SUCCEEDED, "done"),
        ((False, "no"), StepStatus.FAILED, "no"),
        (False, StepStatus.FAILED, "the action reported failure"),
        (42, StepStatus.FAILED, "the action returned int, not a result"),
        ((1, "x"), StepStatus.FAILED, "the action returned tuple, not a result"),
    ],
)
def test_interpret(value: object, status: StepStatus, message: str) -> None:
    assert interpret(value) == (status, message)


def test_success_and_self_feedback(runtime: Runtime) -> None:
    reg = _registry()
    result = Executor(runtime).run(parse_plan(reg, ["quiet()", "ok()", "count(3)"]), timeout=5)
    assert [s.status for s in result.steps] == [
        StepStatus.SELF_FEEDBACK,
        StepStatus.SUCCEEDED,
        StepStatus.SUCCEEDED,
    ]
    assert result.outcome == "succeeded"
    assert result.feedback == (
        "Robot feedback: Execution ['ok()', 'count(n=3)'] completed, result: found 3"
    )


def test_only_self_feedback_has_nothing_to_report(runtime: Runtime) -> None:
    result = Executor(runtime).run(parse_plan(_registry(), ["quiet()"]), timeout=5)
    assert result.outcome == "succeeded"
    assert result.feedback is None


def test_a_failure_stops_the_plan_by_default(runtime: Runtime) -> None:
    reg = _registry()
    result = Executor(runtime).run(parse_plan(reg, ["ok()", "refuse()", "count(1)"]), timeout=5)
    assert [(s.status, s.message) for s in result.steps] == [
        (StepStatus.SUCCEEDED, ""),
        (StepStatus.FAILED, "the door is locked"),
        (StepStatus.CANCELED, "not run: an earlier step failed"),
    ]
    assert result.outcome == "failed"
    assert result.feedback == (
        "Robot feedback: Failed to execute ['refuse()'], error: the door is locked; "
        "not run: ['count(n=1)']"
    )


def test_failures_reported_like_the_seed_when_the_plan_goes_on(runtime: Runtime) -> None:
    reg = _registry()
    plan = parse_plan(reg, ["falsy()", "odd()", "refused()", "buggy()", "ok()"])
    result = Executor(runtime, stop_on_failure=False).run(plan, timeout=5)
    assert [(s.status, s.message) for s in result.steps] == [
        (StepStatus.FAILED, "the action reported failure"),
        (StepStatus.FAILED, "the action returned int, not a result"),
        (StepStatus.FAILED, "shutting down"),
        (StepStatus.FAILED, "RuntimeError: boom"),
        (StepStatus.SUCCEEDED, ""),
    ]
    assert result.feedback == (
        "Robot feedback: Failed to execute ['falsy()', 'odd()', 'refused()', 'buggy()'], "
        "error: RuntimeError: boom"
    )


def test_finish_ends_the_task_and_asks_for_a_reset(runtime: Runtime) -> None:
    resets: list[str] = []
    ex = Executor(runtime, on_finish=lambda: resets.append("reset"))
    result = ex.run(parse_plan(_registry(), ["ok()", "finish()", "ok()"]), timeout=5)
    assert result.outcome == "finished"
    assert result.finished
    assert result.feedback is None  # the conversation starts afresh: nothing to report
    assert [s.status for s in result.steps] == [
        StepStatus.SUCCEEDED,
        StepStatus.SELF_FEEDBACK,
        StepStatus.CANCELED,
    ]
    assert result.steps[2].message == "not run: finish() ended the task"
    assert resets == ["reset"]


def test_summarize_interrupted_lists_what_ran_and_what_did_not() -> None:
    from anima.agent.executor import StepResult

    steps = (
        StepResult(index=0, action="ok", text="ok()", status=StepStatus.SUCCEEDED),
        StepResult(index=1, action="wait", text="wait(seconds=5.0)", status=StepStatus.CANCELED),
    )
    assert summarize(steps, interrupted="wake") == (
        "Robot feedback: INTERRUPTED (wake): completed ['ok()'], canceled ['wait(seconds=5.0)']"
    )
    assert summarize(()) is None
