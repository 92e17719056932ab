"""A planner for tests: scripted replies by request, no server, no model.

::

    planner = ScriptedPlanner({"wave": reply("Hello!", "play_animation('LOOKUP_Waving')")})

A request is looked up by its text, lower-cased and stripped of surrounding punctuation; one
not in the script gets ``default`` (an "I didn't understand" with no actions, unless given).
Everything asked is kept (:attr:`requests`, :attr:`feedbacks`) for the test to check.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping

from anima.agent.planners.base import PlannerReply

NOT_UNDERSTOOD = "Sorry, I didn't understand that."


def reply(response: str, *actions: str) -> PlannerReply:
    """A planner's reply: words to say and action strings (validated by the agent)."""
    return PlannerReply(response=response, actions=list(actions))


def _key(text: str) -> str:
    return text.strip().strip(".!?,").strip().lower()


class ScriptedPlanner:
    """The :class:`~anima.agent.planners.base.Planner` protocol, answering from a script."""

    name = "scripted"

    def __init__(
        self,
        script: Mapping[str, PlannerReply] | None = None,
        *,
        default: PlannerReply | None = None,
        feedback: PlannerReply | None = None,
    ) -> None:
        """``feedback``: the answer to the executor's feedback (None: nothing more to say)."""
        self._script = {_key(k): v for k, v in (script or {}).items()}
        self._default = default or reply(NOT_UNDERSTOOD)
        self._feedback = feedback
        self._lock = threading.Lock()
        self.requests: list[str] = []
        self.feedbacks: list[str] = []
        self.resets = 0
        self.interrupts = 0

    def plan(self, request: str) -> PlannerReply:
        with self._lock:
            self.requests.append(request)
        return self._script.get(_key(request), self._default)

    def feedback(self, summary: str) -> PlannerReply | None:
        with self._lock:
            self.feedbacks.append(summary)
        return self._feedback

    def reset(self) -> None:
        with self._lock:
            self.resets += 1

    def interrupt(self) -> None:
        with self._lock:
            self.interrupts += 1

    def close(self) -> None:
        """Nothing to release."""
