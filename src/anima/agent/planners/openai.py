"""A planner on any OpenAI-compatible chat-completions server (Ollama, llama.cpp, vLLM, hosted).

``POST {base_url}/chat/completions`` with the conversation so far, in one of two modes:

- ``tools``: the registry's actions are the tools (:class:`~anima.agent.planners.tools.
  FriendlyTools`: friendly choice names such as ``wave``, a direction for ``look_at``, compact
  schemas); each tool call becomes an action string ``name(key=value, …)`` built from its JSON
  arguments mapped back to the registry's names (validated later like any plan), the message
  text is the response. Robot feedback goes back as the tool results.
- ``json``: ``response_format: json_object`` and the seed's reply object
  ``{"response": str, "actions": [str], "plan": str?}``; feedback goes back as a user message.

Streaming (``stream``, on by default): with a :class:`~anima.agent.planners.base.ReplySink`
the request asks for ``stream: true`` and the reply is handed on as it arrives (the plan when
whole, the words a sentence at a time; :mod:`~anima.agent.planners.streaming`), then checked
whole exactly as a non-streamed one; a server that answers one JSON body instead is read as
before. :meth:`OpenAIPlanner.acknowledge` tells the model what ran without asking it anything
(the caller skips the second call when the feedback adds nothing).

An HTTP error, a timeout (``timeout_s`` bounds the whole request), a reply over 1 MB, one that
cannot be decoded (not JSON, not UTF-8, nested too deeply, absurd numbers) or one of the wrong
shape at any level is answered with a short spoken apology, no actions, and a
``CommandRejected`` event (source ``agent``) saying why; the conversation is left as it was
before the failed request. The response is bounded to what may be spoken
(:func:`~anima.agent.planners.base.speakable`).
"""

from __future__ import annotations

import dataclasses
import json
import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from anima.agent.actions import ActionRegistry
from anima.agent.planners.base import (
    PlannerReply,
    ReplySink,
    apology,
    interrupted_reply,
    parse_reply_text,
    speakable,
)
from anima.agent.planners.http import (
    InflightCall,
    Link,
    RequestInterruptedError,
    api_key,
    new_client,
    post_json,
    post_stream,
    report,
)
from anima.agent.planners.prompt import json_prompt, tools_prompt
from anima.agent.planners.streaming import ChatStream
from anima.agent.planners.tools import FriendlyTools, action_string, tool_call
from anima.errors import ConfigError, PlannerError
from anima.wire.jsontypes import JsonDict, JsonObject, JsonValue

if TYPE_CHECKING:
    from anima.agent.remembering import Remembering
    from anima.config import OpenAIPlannerConfig
    from anima.events import Publisher

log = logging.getLogger(__name__)

Message = JsonDict  # one chat message, as the wire format has it

SUPERSEDED = "Robot feedback: not run, a new request came first"
MAX_KEPT_TEXT = 4000  # characters of a reply's plan or tool arguments kept in the history


class OpenAIPlanner:
    """Conversation with an OpenAI-compatible server, in tools or JSON mode."""

    name = "openai"

    def __init__(
        self,
        registry: ActionRegistry,
        *,
        base_url: str,
        model: str,
        api_key: str | None = None,
        mode: str = "tools",
        timeout_s: float = 20.0,
        temperature: float = 0.2,
        max_tokens: int = 512,
        max_history: int = 40,
        instructions: str = "",
        events: Publisher | None = None,
        stream: bool = True,
    ) -> None:
        """No network here: the first request opens the connection. ``stream``: ask for a
        streamed reply when the caller gives a sink."""
        if mode not in ("tools", "json"):
            raise ConfigError(f"agent.planner.mode must be tools or json, got {mode!r}")
        self.registry = registry
        self.url = base_url.rstrip("/") + "/chat/completions"
        self.model = model
        self.mode = mode
        self.timeout_s = timeout_s
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.max_history = max_history
        self.streaming = stream
        self._events = events
        self._headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        prompt = tools_prompt if mode == "tools" else json_prompt
        self.system_prompt = prompt(registry, instructions)
        self._tools = FriendlyTools(registry)  # friendly names, directions, compact schemas
        self._history: list[Message] = []
        self._before: tuple[list[Message], list[str]] | None = None  # before the last plan
        self._pending: list[str] = []  # tool-call ids still waiting for their results
        self._client = new_client(timeout_s)
        self._inflight = InflightCall(self.name)
        self.memory: Remembering | None = None  # what it is told it remembers, per request

    def remember_with(self, memory: Remembering) -> None:
        """Tell the model, with each request, what it remembers that matters for it (the
        person talking, pinned memories, the request's; :func:`~anima.agent.remembering.
        memory_block`, at most 1,500 tokens)."""
        self.memory = memory

    def summarise(self, transcript: Sequence[str]) -> list[tuple[str, str]]:
        """What of a finished conversation is worth remembering, as (who, what) pairs, asked
        of the model in one request of its own (not in the conversation's history); at most
        :data:`~anima.agent.summary.MOST` of them; PlannerError when the model fails."""
        from anima.agent.summary import SUMMARY_PROMPT, read_summary

        body: JsonDict = {
            "model": self.model,
            "messages": [
                {"role": "system", "content": SUMMARY_PROMPT},
                {"role": "user", "content": "\n".join(transcript)},
            ],
            "temperature": 0.0,
            "max_tokens": self.max_tokens,
            "stream": False,
        }
        answer = InflightCall(f"{self.name}-summary").run(
            lambda link: post_json(self._client, self.url, body, self._headers, link),
            within=self.timeout_s,
            what=self.url,
        )
        try:
            content = answer["choices"][0]["message"]["content"]
        except (KeyError, IndexError, TypeError):
            raise PlannerError(f"{self.url}: a reply without a message") from None
        return read_summary(content if isinstance(content, str) else "")

    @classmethod
    def from_config(
        cls,
        settings: OpenAIPlannerConfig,
        registry: ActionRegistry,
        *,
        instructions: str = "",
        events: Publisher | None = None,
    ) -> OpenAIPlanner:
        """The planner ``agent.planner`` (type openai) describes."""
        return cls(
            registry,
            base_url=settings.base_url,
            model=settings.model,
            api_key=api_key(settings.api_key_env, "OPENAI_API_KEY"),
            mode=settings.mode,
            timeout_s=settings.timeout_s,
            temperature=settings.temperature,
            max_tokens=settings.max_tokens,
            max_history=settings.max_history,
            instructions=instructions,
            events=events,
            stream=settings.stream,
        )

    @property
    def history(self) -> list[Message]:
        """A copy of the conversation (without the system prompt)."""
        return [dict(m) for m in self._history]

    # ------------------------------------------------------------------ the protocol
    def plan(self, request: str, sink: ReplySink | None = None) -> PlannerReply:
        self._before = (list(self._history), list(self._pending))
        added = self._close_pending(SUPERSEDED)
        message: Message = {"role": "user", "content": request}
        return self._exchange([*added, message], "plan", request, sink)

    def feedback(self, summary: str, sink: ReplySink | None = None) -> PlannerReply | None:
        added = self._close_pending(summary)
        if not added:
            added = [{"role": "user", "content": summary}]
        return self._exchange(added, "feedback", summary, sink)

    def acknowledge(self, summary: str) -> None:
        """What ran, kept in the conversation without a request: the tool calls get their
        results (the API wants one each before the next request) and nothing is asked."""
        added = self._close_pending(summary)
        self._pending = []
        self._history.extend(added)
        self._trim()

    def reset(self) -> None:
        self._history.clear()
        self._pending.clear()
        self._before = None

    def retract(self) -> None:
        """Forget the last request and its answer (a reply taken back: the person went on):
        the history as it was before it."""
        if self._before is not None:
            self._history, self._pending = self._before
            self._before = None

    def interrupt(self) -> None:
        self._inflight.interrupt()

    def close(self) -> None:
        self._inflight.close(self.timeout_s + 1.0)
        self._client.close()

    # ------------------------------------------------------------------ one round trip
    def _close_pending(self, content: str) -> list[Message]:
        """Tool results for the calls of the last reply (the API wants one per call)."""
        return [{"role": "tool", "tool_call_id": i, "content": content} for i in self._pending]

    def _exchange(
        self, added: list[Message], command: str, text: str, sink: ReplySink | None = None
    ) -> PlannerReply:
        remembered: list[Message] = []
        if self.memory is not None and command == "plan":
            from anima.agent.remembering import memory_block

            block = memory_block(self.memory, text)
            if block:
                remembered.append({"role": "system", "content": block})
        body: JsonDict = {
            "model": self.model,
            "messages": [
                {"role": "system", "content": self.system_prompt},
                *remembered,
                *self._history,
                *added,
            ],
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,  # a bounded reply: the server stops there
            "stream": self.streaming and sink is not None,
        }
        if self.mode == "tools":
            body["tools"] = self._tools.tools
            body["tool_choice"] = "auto"
        else:
            body["response_format"] = {"type": "json_object"}
        try:
            if body["stream"] and sink is not None:
                reply, message, calls = self._inflight.run(
                    lambda link: self._streamed(body, link, sink),
                    within=self.timeout_s,
                    what=self.url,
                )
            else:
                answer = self._inflight.run(
                    lambda link: post_json(self._client, self.url, body, self._headers, link),
                    within=self.timeout_s,
                    what=self.url,
                )
                reply, message, calls = self._read_checked(answer)
        except RequestInterruptedError:
            return interrupted_reply()
        except PlannerError as exc:
            report(self._events, self.name, command, text, str(exc))
            return apology(str(exc))
        self._history.extend(added)
        self._history.append(message)
        self._pending = calls
        self._trim()
        return reply

    def _streamed(
        self, body: JsonObject, link: Link, sink: ReplySink
    ) -> tuple[PlannerReply, Message, list[str]]:
        """One streamed request (on the request's thread): the events go to a ChatStream that
        hands the words on; the assembled message is checked whole, then the plan and the
        rest of the words go to ``sink``. A server that did not stream is read as usual."""
        chat = ChatStream(self.mode, sink, self._tools.plan_text)
        answer = post_stream(self._client, self.url, body, self._headers, link, on_event=chat.event)
        if answer is not None:
            return self._read_checked(answer)  # not streamed: the caller handles it whole
        reply, message, calls = self._read_checked(chat.message())
        chat.finish(reply.actions)
        return dataclasses.replace(reply, streamed=True), message, calls

    def _read_checked(self, answer: Any) -> tuple[PlannerReply, Message, list[str]]:
        """:meth:`_read`, with any failure it did not foresee also a PlannerError: whatever
        a server sends must end as an apology with a reason, never as a dead turn."""
        try:
            return self._read(answer)
        except PlannerError:
            raise
        except (RecursionError, ValueError, TypeError, AttributeError, KeyError) as exc:
            log.warning("openai planner: unforeseen reply shape", exc_info=True)
            raise PlannerError(f"malformed reply: {type(exc).__name__} reading it") from None

    def _read(self, answer: Any) -> tuple[PlannerReply, Message, list[str]]:
        """(reply, the assistant message to keep, its tool-call ids) or PlannerError."""
        try:
            message = answer["choices"][0]["message"]
        except (KeyError, IndexError, TypeError):
            raise PlannerError("malformed reply: no choices[0].message") from None
        if not isinstance(message, dict):
            raise PlannerError("malformed reply: the message is not an object")
        content = message.get("content") or ""
        if not isinstance(content, str):
            raise PlannerError("malformed reply: the message content is not text")
        if self.mode == "json":
            reply = parse_reply_text(content)
            reply = dataclasses.replace(
                reply, actions=[self._tools.plan_text(a) for a in reply.actions]
            )
            # the history keeps what was used, not what was sent: a 1 MB reply kept whole would
            # be encoded into every later request (40 ms of GIL per request, the loop's ticks)
            kept_reply: JsonDict = {"response": reply.response, "actions": reply.actions}
            if reply.plan is not None:
                kept_reply["plan"] = reply.plan[:MAX_KEPT_TEXT]
            return reply, {"role": "assistant", "content": json.dumps(kept_reply)}, []
        raw_calls = message.get("tool_calls") or []
        if not isinstance(raw_calls, list):
            raise PlannerError("malformed reply: tool_calls is not a list")
        actions, ids = [], []
        kept: list[JsonValue] = []
        for n, call in enumerate(raw_calls):
            name, args, call_id = tool_call(call, n)
            actions.append(action_string(name, self._tools.call(name, args)))
            ids.append(call_id)
            arguments = json.dumps(args)
            if len(arguments) > MAX_KEPT_TEXT:  # refused by the plan's checks anyway
                arguments = "{}"
            kept.append(
                {
                    "id": call_id,
                    "type": "function",
                    "function": {"name": name, "arguments": arguments},
                }
            )
        response = speakable(content)
        # content is always text ("" with tool calls alone): llama-cpp-python's server refuses
        # an assistant message whose content is null (HTTP 500 on every later turn)
        kept_message: Message = {"role": "assistant", "content": response}
        if kept:
            kept_message["tool_calls"] = kept
        return PlannerReply(response=response, actions=actions), kept_message, ids

    def _trim(self) -> None:
        """Keep the last ``max_history`` messages, cut only before a user message (a tool
        result must never lose the call it answers)."""
        if len(self._history) <= self.max_history:
            return
        cut = len(self._history) - self.max_history
        while cut < len(self._history) and self._history[cut].get("role") != "user":
            cut += 1
        del self._history[:cut]
