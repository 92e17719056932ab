"""A planner on a Dify app (the seed's choice): the chat-messages API, in blocking mode.

``POST {base_url}/chat-messages`` with ``inputs``, ``query``, ``user``, ``response_mode:
"blocking"`` and the ``conversation_id`` Dify returned last (empty to start one). The app's
answer is the seed's JSON reply (``{"response": …, "action": [...]}``); an answer with no JSON
object at all is taken as words to say. Robot feedback is sent as the next query; ``reset``
(after ``finish``) starts a new conversation. Failures (and the limits: the whole request within
``timeout_s``, at most 1 MB) are answered like the OpenAI planner's: a spoken apology, no
actions, a ``CommandRejected`` event. Plain-text answers are bounded like any spoken reply.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from anima.agent.planners.base import PlannerReply, apology, interrupted_reply, parse_reply_text
from anima.agent.planners.http import (
    HTTPStatusError,
    InflightCall,
    RequestInterruptedError,
    api_key,
    new_client,
    post_json,
    report,
)
from anima.errors import PlannerError
from anima.wire.jsontypes import JsonObject

if TYPE_CHECKING:
    from anima.config import DifyPlannerConfig
    from anima.events import Publisher

log = logging.getLogger(__name__)


class DifyPlanner:
    """Conversation with a Dify chat app; its conversation id is kept until reset."""

    name = "dify"

    def __init__(
        self,
        *,
        base_url: str,
        api_key: str | None,
        user: str = "anima",
        timeout_s: float = 20.0,
        inputs: Mapping[str, str] | None = None,
        events: Publisher | None = None,
    ) -> None:
        """``base_url`` is the app's API base (``https://api.dify.ai/v1``); no network here."""
        if not api_key:
            log.warning(
                "dify planner: no API key (agent.planner.api_key_env): requests will be refused"
            )
        self.url = base_url.rstrip("/") + "/chat-messages"
        self.user = user
        self.timeout_s = timeout_s
        self.inputs = dict(inputs or {})
        self._events = events
        self._headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self.conversation_id: str | None = None
        self._client = new_client(timeout_s)
        self._inflight = InflightCall(self.name)

    @classmethod
    def from_config(
        cls, settings: DifyPlannerConfig, events: Publisher | None = None
    ) -> DifyPlanner:
        """The planner ``agent.planner`` (type dify) describes."""
        return cls(
            base_url=settings.base_url,
            api_key=api_key(settings.api_key_env, "DIFY_API_KEY"),
            user=settings.user,
            timeout_s=settings.timeout_s,
            events=events,
        )

    def plan(self, request: str) -> PlannerReply:
        return self._chat(request, "plan")

    def feedback(self, summary: str) -> PlannerReply | None:
        return self._chat(summary, "feedback")

    def reset(self) -> None:
        self.conversation_id = None

    def interrupt(self) -> None:
        self._inflight.interrupt()

    def close(self) -> None:
        self._inflight.close(self.timeout_s + 1.0)
        self._client.close()

    def _chat(self, query: str, command: str) -> PlannerReply:
        body: JsonObject = {
            "inputs": self.inputs,
            "query": query,
            "response_mode": "blocking",
            "conversation_id": self.conversation_id or "",
            "user": self.user,
        }
        try:
            answer = self._inflight.run(
                lambda link: post_json(self._client, self.url, body, self._headers, link),
                within=self.timeout_s,
                what=self.url,
            )
            text, conversation = _read(answer)
            reply = parse_reply_text(text, plain_text_ok=True)
        except RequestInterruptedError:
            return interrupted_reply()
        except PlannerError as exc:
            if isinstance(exc, HTTPStatusError) and exc.status == 404 and self.conversation_id:
                self.conversation_id = None  # the conversation is gone: the next query starts one
            report(self._events, self.name, command, query, str(exc))
            return apology(str(exc))
        if conversation:
            self.conversation_id = conversation
        return reply


def _read(answer: Any) -> tuple[str, str | None]:
    if not isinstance(answer, dict) or not isinstance(answer.get("answer"), str):
        raise PlannerError("malformed reply: no 'answer' text")
    conversation = answer.get("conversation_id")
    return answer["answer"], conversation if isinstance(
        conversation, str
    ) and conversation else None
