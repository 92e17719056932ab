"""What the MCP server does with the robot, with no MCP in it: tool calls, and the resources
(:mod:`~anima.frontdoors.mcp.resources`) it owns.

Every tool call runs through the agent's :class:`~anima.agent.executor.Executor` (source
``mcp``), one plan at a time in arrival order: an action is a plan of one step, ``run_plan``
a plan of many, checked whole before the first step moves (the same
:func:`~anima.agent.plan.step_from_values` check as the agent's tool calls). While it runs,
``progress`` hears each step end (and a heartbeat); a cancel (the client's, or ``stop``)
cancels the plan, which holds the motion on the next tick. ``stop``, ``emergency_stop`` and
``reset_emergency_stop`` run at once, never queued and never rate-limited. Each refusal is
published as a :class:`~anima.events.CommandRejected` from source ``mcp`` with the same reason
the other doors give.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from anima import commands as cmd
from anima.agent.actions import ActionRegistry
from anima.agent.executor import Executor, PlanResult, StepResult
from anima.agent.plan import MAX_STEPS, Plan, Step, step_from_values
from anima.config.mcp import McpConfig
from anima.errors import AnimaError, PlanError
from anima.events import CommandRejected, PlanOutcome
from anima.frontdoors.mcp.resources import Resources
from anima.frontdoors.mcp.tools import RUN_PLAN, Tool, build_tools
from anima.wire.jsontypes import JsonObject
from anima.wire.payloads import shown

if TYPE_CHECKING:
    from anima.agent.remembering import Remembering
    from anima.runtime import Runtime

log = logging.getLogger(__name__)

SOURCE = "mcp"
HEARTBEAT_S = 1.0  # progress while one step runs long (a wait, a walk): the client knows
Progress = Callable[[float, float, str], None]  # (done, total, message)


@dataclass(frozen=True)
class Outcome:
    """A tool call's answer: the text a model reads, whether it is an error, and the plan's
    steps as data (``structuredContent``)."""

    text: str
    error: bool = False
    data: JsonObject | None = None


class Cancel:
    """A call's cancel: :meth:`set` from any thread (the client's cancel on the server's loop)
    runs the hooks at once — the running plan's cancel, which holds the motion on the next
    tick — instead of waiting for a poll."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._set = False
        self._hooks: list[Callable[[], None]] = []

    def set(self) -> None:
        with self._lock:
            if self._set:
                return
            self._set = True
            hooks, self._hooks = self._hooks, []
        for hook in hooks:
            hook()

    def is_set(self) -> bool:
        return self._set

    def on_set(self, hook: Callable[[], None]) -> None:
        """Run ``hook`` when set (now, if it already is)."""
        with self._lock:
            if not self._set:
                self._hooks.append(hook)
                return
        hook()


class Bucket:
    """A token bucket: ``burst`` calls at once, then ``rate`` a second."""

    def __init__(self, rate: float, burst: int, now: Callable[[], float] = time.monotonic):
        self._rate, self._burst, self._now = rate, float(burst), now
        self._tokens, self._at = float(burst), now()
        self._lock = threading.Lock()

    def take(self) -> bool:
        with self._lock:
            t = self._now()
            self._tokens = min(self._burst, self._tokens + (t - self._at) * self._rate)
            self._at = t
            if self._tokens < 1.0:
                return False
            self._tokens -= 1.0
            return True


class McpRobot:
    """The robot as an MCP server sees it: :attr:`tools`, :meth:`call`, :meth:`read`."""

    def __init__(
        self,
        runtime: Runtime,
        registry: ActionRegistry,
        config: McpConfig,
        *,
        memory: Remembering | None = None,
    ) -> None:
        """``memory``: what ``anima://memory`` reads (the registry's ``remember`` and
        ``forget`` work on it: :func:`~anima.agent.remembering.shared_memory`)."""
        self.runtime = runtime
        self.registry = registry
        self.config = config
        self.tools: list[Tool] = build_tools(registry, config)
        self._tools = {t.name: t for t in self.tools}
        self._executor = Executor.from_config(runtime, runtime.config.agent, source=SOURCE)
        self._turn = threading.Lock()  # one plan at a time, in arrival order
        self._bucket = Bucket(config.rate_per_s, config.burst)
        self.resources = Resources(runtime, config, memory=memory)
        self.calls = 0

    # ------------------------------------------------------------------ lifecycle
    def start(self) -> None:
        self.resources.start()

    def stop(self, timeout: float = 5.0) -> None:
        self.resources.stop_watching()
        self._executor.close(timeout)
        self.resources.stop(timeout)

    # ------------------------------------------------------------------ resources
    def read(self, uri: str) -> str:
        """A resource's JSON text; KeyError for a URI that is none of :data:`RESOURCES`."""
        return self.resources.read(uri)

    def watch(self, changed: Callable[[str], None]) -> Callable[[], None]:
        """``changed(uri)`` when the state or the event log changes (at most mcp.state_hz)."""
        return self.resources.watch(changed)

    # ------------------------------------------------------------------ tools
    def call(
        self,
        name: str,
        args: Mapping[str, object] | None = None,
        *,
        progress: Progress | None = None,
        cancelled: Cancel | None = None,
    ) -> Outcome:
        """Carry out one tool call; returns when it has finished (or was cancelled)."""
        args = dict(args or {})
        self.calls += 1
        tool = self._tools.get(name)
        if tool is None:
            known = ", ".join(self._tools)
            return self._refuse(name, args, f"unknown tool {name[:60]!r} (tools: {known})")
        log.info("mcp: %s %s", name, shown(args))
        if tool.control:
            return self._control(name)
        if not self._bucket.take():
            return self._refuse(
                name,
                args,
                f"too many calls: at most {self.config.burst} at once, then "
                f"{self.config.rate_per_s:g} a second (mcp.rate_per_s)",
            )
        try:
            plan = self._plan(name, args)
        except AnimaError as exc:
            return self._refuse(name, args, str(exc))
        return self._run(plan, progress, cancelled or Cancel())

    def _plan(self, name: str, args: dict[str, object]) -> Plan:
        """The call as a validated plan; PlanError (an AnimaError) naming the step at fault."""
        if name != RUN_PLAN:
            return Plan(steps=(step_from_values(self.registry[name], args),))
        unknown = sorted(set(args) - {"actions"})
        if unknown:
            raise PlanError(f"run_plan: unknown argument {unknown[0][:60]!r} (takes actions)")
        items = args.get("actions")
        if not isinstance(items, list) or not items:
            raise PlanError("run_plan: actions must be a non-empty list of steps")
        if len(items) > MAX_STEPS:
            raise PlanError(f"plan rejected: {len(items)} steps, at most {MAX_STEPS}")
        return Plan(steps=tuple(self._step(item, i) for i, item in enumerate(items)))

    def _step(self, item: object, index: int) -> Step:
        if not isinstance(item, Mapping) or not isinstance(item.get("action"), str):
            raise PlanError(
                f'step {index + 1}: must be {{"action": name, "args": {{…}}}}, got {shown(item)}',
                index=index,
            )
        name = item["action"]
        tool = self._tools.get(name)
        if tool is None or tool.control or name == RUN_PLAN:
            raise PlanError(f"step {index + 1}: unknown action {name[:60]!r}", index=index)
        extra = sorted(set(item) - {"action", "args"})
        if extra:
            raise PlanError(f"step {index + 1}: unknown key {str(extra[0])[:60]!r}", index=index)
        values = item.get("args") or {}
        if not isinstance(values, Mapping):
            raise PlanError(f"step {index + 1} {name}: args must be an object", index=index)
        return step_from_values(self.registry[name], values, index)

    def _run(self, plan: Plan, progress: Progress | None, cancelled: Cancel) -> Outcome:
        total = float(len(plan))
        deadline = time.monotonic() + self.config.call_timeout_s
        # in arrival order, one at a time: a call waits for the one before it
        while not self._turn.acquire(timeout=0.05):
            if cancelled.is_set():
                return Outcome("cancelled before it started", error=True)
            if time.monotonic() > deadline:
                return Outcome("timed out waiting for the calls before it", error=True)
        try:
            done: list[StepResult] = []

            def on_step(result: StepResult) -> None:
                done.append(result)
                if progress is not None:
                    progress(float(len(done)), total, f"{result.text}: {result.status}")

            task = self._executor.start(plan, on_step=on_step)
            cancelled.on_set(lambda: task.cancel("cancelled by the MCP client"))
            beat = time.monotonic() + HEARTBEAT_S
            while task.join(0.05) is None:
                now = time.monotonic()
                if now > deadline and not task.canceled:
                    task.cancel(f"past mcp.call_timeout_s ({self.config.call_timeout_s:g} s)")
                if progress is not None and now >= beat:
                    beat = now + HEARTBEAT_S
                    running = plan.steps[min(len(done), len(plan) - 1)].text
                    progress(float(len(done)), total, f"running {running}")
            result = task.result
            assert result is not None
        finally:
            self._turn.release()
        return _outcome(result)

    def _control(self, name: str) -> Outcome:
        execute = self.runtime.execute
        if name == "stop":
            self._executor.cancel("stop")
            execute(cmd.StopAnimation())
            execute(cmd.StopSpeaking())
            return Outcome("stopped: the motion eases to a hold and speech stopped")
        if name == "emergency_stop":
            execute(cmd.EmergencyStop())
            self._executor.cancel("emergency stop")
            return Outcome(
                "emergency stop: motion held, speech stopped; moves and speech are refused "
                "until reset_emergency_stop"
            )
        execute(cmd.ResetEmergencyStop())
        return Outcome("emergency stop released: moves and speech are accepted again")

    def _refuse(self, name: str, args: Mapping[str, object], reason: str) -> Outcome:
        log.warning("mcp: %s refused: %s", name, reason)
        self.runtime.publish(
            CommandRejected(
                t=self.runtime.clock.now(),
                command=name[:60],
                argument=shown(dict(args)),
                reason=reason,
                source=SOURCE,
            )
        )
        return Outcome(reason, error=True)

    # ------------------------------------------------------------------ prompt
    def prompt(self) -> str:
        """How to drive this robot, from its tools: for a model that has not seen it."""
        lines = [
            "You drive a robot through these tools. Each call returns when the action has "
            "finished, with its status; a refused call says why (out of range, unknown name, "
            "emergency stop active). Use run_plan for a sequence (it is checked whole first). "
            "Call stop to cancel what runs; emergency_stop to hold everything until "
            "reset_emergency_stop. Read anima://state for what the robot is doing.",
            "",
        ]
        for tool in self.tools:
            action = self.registry.get(tool.name)
            usage = action.usage() if action is not None and not tool.control else tool.name
            lines.append(f"- {usage}: {tool.description}")
        return "\n".join(lines)


def _outcome(result: PlanResult) -> Outcome:
    steps = [
        {"action": s.text, "status": str(s.status), "message": s.message} for s in result.steps
    ]
    lines = [
        f"{s.text}: {s.status}" + (f" ({s.message})" if s.message else "") for s in result.steps
    ]
    data: JsonObject = {
        "plan": result.plan,
        "outcome": str(result.outcome),
        "steps": steps,
    }
    failed = result.outcome is not PlanOutcome.SUCCEEDED
    head = {
        PlanOutcome.SUCCEEDED: "done",
        PlanOutcome.FAILED: "failed",
        PlanOutcome.INTERRUPTED: "interrupted",
        PlanOutcome.FINISHED: "finished",
    }[result.outcome]
    return Outcome(f"{head}: " + "; ".join(lines), error=failed, data=data)
