"""The executor: runs a validated plan as one cancellable task, step by step.

Each plan runs on its own thread, owned by its :class:`PlanTask` (``cancel``/``join``) and by
the :class:`Executor` (``close``). Every step publishes :class:`~anima.events.ActionStatus`
events (``running``, then ``succeeded``, ``self_feedback``, ``failed`` or ``canceled``), framed
by ``PlanStarted``/``PlanFinished``. Actions answer with the seed's result protocol: ``None`` —
self-feedback (nothing to report), ``True`` — done, ``(ok, message)``.

Cancel is event-driven: :meth:`PlanTask.cancel` sets the plan's cancel event, holds the motion
at once (``StopAnimation``, the engine's ``clear()``: the running move decelerates to a hold on
the next tick, queued ones are dropped), and runs the cancel hooks of the running action
(speech stopped, programs signalled, waits woken). The remaining steps are canceled and the
feedback says INTERRUPTED.
A plan started with a ``hold`` (the early reply of full duplex: the turn may not be over) runs
its speech (:data:`SPEECH_STEPS`) at once and waits for ``hold()`` before its first other
step: False (the person went on) cancels the rest, nothing having moved.
``finish()`` ends the task: the rest of the plan is dropped and the result says ``finished`` so
the caller resets the conversation.

The feedback summary has the seed's form, for the planner::

    Robot feedback: Execution ["say(text='hi')", "play_animation(name='nod')"] completed
    Robot feedback: Failed to execute ["play_animation(name='dance')"], error: …
    Robot feedback: INTERRUPTED (wake): completed [...], canceled [...]
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from anima import commands as cmd
from anima.agent.context import ActionContext
from anima.agent.plan import Plan, Step
from anima.errors import AnimaError, CommandRefusedError, EngineStateError
from anima.events import ActionStatus, PlanFinished, PlanOutcome, PlanStarted, StepStatus

if TYPE_CHECKING:
    from anima.agent.port import RobotPort
    from anima.config import AgentConfig

log = logging.getLogger(__name__)

SPEECH_STEPS = frozenset({"say"})  # steps a held plan runs before its hold says yes


@dataclass(frozen=True, kw_only=True)
class StepResult:
    index: int
    action: str
    text: str  # the canonical action string
    status: StepStatus
    message: str = ""


@dataclass(frozen=True, kw_only=True)
class PlanResult:
    plan: str  # the plan's id
    steps: tuple[StepResult, ...]
    outcome: PlanOutcome
    feedback: str | None  # "Robot feedback: …" for the planner; None: nothing to report
    finished: bool = False  # finish() ran: reset the conversation

    @property
    def interrupted(self) -> bool:
        return self.outcome == "interrupted"


def interpret(result: object) -> tuple[StepStatus, str]:
    """The seed's result protocol → (status, message)."""
    if result is None:
        return StepStatus.SELF_FEEDBACK, ""
    if result is True:
        return StepStatus.SUCCEEDED, ""
    if result is False:
        return StepStatus.FAILED, "the action reported failure"
    if isinstance(result, tuple | list) and len(result) == 2 and isinstance(result[0], bool):
        ok, message = result
        return (StepStatus.SUCCEEDED if ok else StepStatus.FAILED), str(message)
    return StepStatus.FAILED, f"the action returned {type(result).__name__}, not a result"


def adds_nothing(result: PlanResult) -> bool:
    """Whether the planner would learn nothing from this result: every step succeeded and none
    said anything (the second model call can be skipped)."""
    return result.outcome == "succeeded" and all(
        s.status in (StepStatus.SUCCEEDED, StepStatus.SELF_FEEDBACK) and not s.message
        for s in result.steps
    )


def summarize(steps: tuple[StepResult, ...], *, interrupted: str | None = None) -> str | None:
    """The feedback for the planner, in the seed's words; None when there is nothing to say."""
    done = [s.text for s in steps if s.status is StepStatus.SUCCEEDED]
    failed = [s for s in steps if s.status is StepStatus.FAILED]
    canceled = [s.text for s in steps if s.status is StepStatus.CANCELED]
    if interrupted is not None:
        why = "" if interrupted in ("", "interrupted") else f" ({interrupted})"
        return f"Robot feedback: INTERRUPTED{why}: completed {done}, canceled {canceled}"
    if failed:
        text = f"Robot feedback: Failed to execute {[s.text for s in failed]}"
        if failed[-1].message:
            text += f", error: {failed[-1].message}"
        if canceled:
            text += f"; not run: {canceled}"
        return text
    if done:
        details = [s.message for s in steps if s.status is StepStatus.SUCCEEDED and s.message]
        text = f"Robot feedback: Execution {done} completed"
        if details:
            text += f", result: {'; '.join(details)}"
        return text
    return None


class PlanTask:
    """One plan running on its own thread; cancel it, join it, read its result."""

    def __init__(
        self,
        executor: Executor,
        plan: Plan,
        ctx: ActionContext,
        on_step: Callable[[StepResult], None] | None = None,
        hold: Callable[[], bool] | None = None,
    ) -> None:
        self.plan = plan
        self._on_step = on_step
        self._hold = hold
        self.id = plan.id
        self._executor = executor
        self._ctx = ctx
        self._result: PlanResult | None = None
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"anima-plan-{plan.id}", daemon=True)
        self.current: int | None = None  # index of the step running now

    @property
    def done(self) -> bool:
        return self._done.is_set()

    @property
    def result(self) -> PlanResult | None:
        return self._result

    @property
    def canceled(self) -> bool:
        return self._ctx.canceled

    def cancel(self, reason: str = "interrupted") -> None:
        """Interrupt now: motion held, speech stopped, programs signalled, the rest canceled.
        Returns at once (join() waits for the task to wind down)."""
        if not self._done.is_set():
            self._ctx.cancel(reason)

    def join(self, timeout: float | None = None) -> PlanResult | None:
        """Wait for the end of the task; its result, or None if still running after timeout."""
        self._done.wait(timeout)
        if self._done.is_set():
            self._thread.join(1.0)
        return self._result

    # ------------------------------------------------------------------ the task's thread
    def _run(self) -> None:
        ex, ctx, plan = self._executor, self._ctx, self.plan
        results: list[StepResult] = []
        try:
            ex.publish(PlanStarted(t=ex.now(), plan=plan.id, steps=plan.texts, source=ex.source))
            after = ""  # why the steps left are not run
            for step in plan.steps:
                if self._hold is not None and step.name not in SPEECH_STEPS:
                    hold, self._hold = self._hold, None
                    if not hold() and not ctx.canceled:
                        ctx.cancel("taken back: the person went on")
                if ctx.canceled:
                    break
                self.current = step.index
                ex.publish_step(plan.id, step, StepStatus.RUNNING, "")
                status, message = self._step(step)
                results.append(self._record(step, status, message))
                if ctx.finished:
                    after = "not run: finish() ended the task"
                    break
                if status is StepStatus.FAILED and ex.stop_on_failure:
                    after = "not run: an earlier step failed"
                    break
            self.current = None
            if ctx.canceled:
                after = f"not run: {ctx.cancel_reason or 'interrupted'}"
            for step in plan.steps[len(results) :]:
                results.append(self._record(step, StepStatus.CANCELED, after))
        finally:
            self._finish(tuple(results))

    def _step(self, step: Step) -> tuple[StepStatus, str]:
        ctx = self._ctx
        try:
            status, message = interpret(step.action.fn(ctx, *step.args, **step.kwargs))
        except AnimaError as exc:
            status, message = StepStatus.FAILED, str(exc)
        except Exception as exc:  # an action's bug fails its step, never the runtime
            log.exception("action %s raised", step.text)
            status, message = StepStatus.FAILED, f"{type(exc).__name__}: {exc}"
        finally:
            ctx.reap()  # programs the step started end with it
        if ctx.canceled:
            # a command that raced the cancel (queued after its clear) is held here
            self._executor.robot.execute(cmd.StopAnimation())
            if status is not StepStatus.SUCCEEDED and status is not StepStatus.SELF_FEEDBACK:
                return StepStatus.CANCELED, ctx.cancel_reason or "interrupted"
        return status, message

    def _record(self, step: Step, status: StepStatus, message: str) -> StepResult:
        self._executor.publish_step(self.plan.id, step, status, message)
        result = StepResult(
            index=step.index, action=step.name, text=step.text, status=status, message=message
        )
        if self._on_step is not None:
            try:
                self._on_step(result)
            except Exception:  # the caller's hook must not end the plan
                log.exception("on_step callback failed")
        return result

    def _finish(self, steps: tuple[StepResult, ...]) -> None:
        ctx, ex = self._ctx, self._executor
        if ctx.canceled:
            outcome, feedback = (
                PlanOutcome.INTERRUPTED,
                summarize(steps, interrupted=ctx.cancel_reason),
            )
        elif ctx.finished:
            outcome, feedback = PlanOutcome.FINISHED, None
        else:
            failed = any(s.status is StepStatus.FAILED for s in steps)
            outcome = PlanOutcome.FAILED if failed else PlanOutcome.SUCCEEDED
            feedback = summarize(steps)
        self._result = PlanResult(
            plan=self.plan.id,
            steps=steps,
            outcome=outcome,
            feedback=feedback,
            finished=ctx.finished,
        )
        ex.publish(
            PlanFinished(t=ex.now(), plan=self.plan.id, outcome=outcome, feedback=feedback or "")
        )
        if ctx.finished and ex.on_finish is not None:
            try:
                ex.on_finish()
            except Exception:
                log.exception("on_finish callback failed")
        self._done.set()


class Executor:
    """Runs plans on a robot (the runtime, through its port), one at a time."""

    def __init__(
        self,
        robot: RobotPort,
        *,
        locale: str = "en-US",
        step_timeout_s: float = 60.0,
        stop_on_failure: bool = True,
        process_timeout_s: float = 2.0,
        on_finish: Callable[[], None] | None = None,
        source: str = "agent",
    ) -> None:
        """``on_finish`` is called on the plan's thread when finish() ended a task, before
        join() returns: reset the planner's conversation there (never join or close the
        executor from it). ``source`` is reported in PlanStarted events."""
        self.robot = robot
        self.locale = locale
        self.step_timeout_s = step_timeout_s
        self.stop_on_failure = stop_on_failure
        self.process_timeout_s = process_timeout_s
        self.on_finish = on_finish
        self.source = source
        self._lock = threading.Lock()
        self._current: PlanTask | None = None

    @classmethod
    def from_config(
        cls,
        robot: RobotPort,
        config: AgentConfig,
        *,
        on_finish: Callable[[], None] | None = None,
        source: str = "agent",
    ) -> Executor:
        """An executor with the agent section's locale, timeouts and failure policy."""
        return cls(
            robot,
            locale=config.locale,
            step_timeout_s=config.step_timeout_s,
            stop_on_failure=config.stop_on_failure,
            on_finish=on_finish,
            source=source,
        )

    @property
    def current(self) -> PlanTask | None:
        """The task running now, if any."""
        task = self._current
        return task if task is not None and not task.done else None

    @property
    def busy(self) -> bool:
        return self.current is not None

    def _hold(self) -> None:
        """A cancel's first act: the motion held (the runtime's StopAnimation)."""
        self.robot.execute(cmd.StopAnimation())

    def start(
        self,
        plan: Plan,
        *,
        preempt: bool = False,
        on_step: Callable[[StepResult], None] | None = None,
        hold: Callable[[], bool] | None = None,
    ) -> PlanTask:
        """Run ``plan`` on a new thread; with ``preempt``, cancel (and join) a running one
        first, else refuse while one runs. ``on_step`` gets each step's result as it ends (on
        the plan's thread, before the next step starts). ``hold``: the module docstring's."""
        with self._lock:
            running = self.current
            if running is not None:
                if not preempt:
                    raise CommandRefusedError(
                        f"plan {running.id} is still running: cancel it or start with preempt"
                    )
                running.cancel("preempted")
                if running.join(self.process_timeout_s + 2.0) is None:
                    raise EngineStateError(f"plan {running.id} did not stop after cancel")
            ctx = ActionContext(
                self.robot,
                locale=self.locale,
                step_timeout_s=self.step_timeout_s,
                process_timeout_s=self.process_timeout_s,
                halt=self._hold,
            )
            task = PlanTask(self, plan, ctx, on_step, hold)
            self._current = task
            task._thread.start()
            return task

    def run(self, plan: Plan, timeout: float | None = None) -> PlanResult:
        """Start ``plan`` and wait for its result (cancels it after ``timeout``)."""
        task = self.start(plan)
        result = task.join(timeout)
        if result is None:
            task.cancel("timeout")
            result = task.join(self.process_timeout_s + 2.0)
        if result is None:
            raise EngineStateError(f"plan {task.id} did not stop after cancel")
        return result

    def cancel(self, reason: str = "interrupted") -> bool:
        """Interrupt the running plan, if any (True when there was one)."""
        task = self.current
        if task is None:
            return False
        task.cancel(reason)
        return True

    def close(self, timeout: float = 5.0) -> None:
        """Cancel the running plan and wait for its thread (at most ``timeout``)."""
        task = self._current
        if task is None:
            return
        task.cancel("shutdown")
        if task.join(timeout) is None:
            log.warning("plan %s did not stop within %g s", task.id, timeout)
        self._current = None

    # ------------------------------------------------------------------ events
    def now(self) -> float:
        return self.robot.clock.now()

    def publish(self, event: PlanStarted | PlanFinished | ActionStatus) -> None:
        self.robot.publish(event)

    def publish_step(self, plan: str, step: Step, status: StepStatus, message: str) -> None:
        self.robot.publish(
            ActionStatus(
                t=self.now(),
                plan=plan,
                index=step.index,
                action=step.name,
                step=step.text,
                status=status,
                message=message,
            )
        )
