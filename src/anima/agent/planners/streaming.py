"""Streamed replies: sentences out of text that arrives in pieces, the seed's JSON reply read
while it streams, and an OpenAI chat-completion stream assembled into one message.

The order matters to what the robot may say: in the JSON reply the ``actions`` come first in the
schema the prompt asks for, so the plan is complete (and validated by the caller) before the
first word of ``response``; :class:`JsonReplyReader` hands the plan on the moment its array
closes, whatever the model put first. In tools mode the tool calls arrive at the end:
:class:`ChatStream` hands the whole plan on when the stream ends, and the words as they come
(the caller holds those that might promise an action until then).
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from anima.agent.planners.base import ReplySink
from anima.errors import PlannerError
from anima.wire.jsontypes import JsonDict, JsonObject

MAX_TOOL_CALLS = 50  # a plan has at most this many steps (plan.MAX_STEPS): more is refused


_SENTENCE_END = re.compile(r"[.!?…]+[\"')\]]*\s+")


class Sentences:
    """Text arriving in pieces → whole sentences (an end mark followed by white space), so the
    speech can start on the first while the rest arrives; :meth:`flush` gives the tail."""

    def __init__(self) -> None:
        self._buffer = ""

    def feed(self, text: str) -> Iterator[str]:
        self._buffer += text
        start = 0
        for match in _SENTENCE_END.finditer(self._buffer):
            sentence = self._buffer[start : match.end()].strip()
            start = match.end()
            if sentence:
                yield sentence
        self._buffer = self._buffer[start:]

    def flush(self) -> Iterator[str]:
        rest, self._buffer = self._buffer.strip(), ""
        if rest:
            yield rest


_ESCAPES = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}


class JsonReplyReader:
    """The seed's JSON reply read as its text streams in (one pass, state kept between pieces).

    ``actions`` (or ``action``) goes to the sink as soon as its value is complete, whatever
    comes after; the ``response`` string's words go out sentence by sentence as they are
    decoded. Only the top-level object is read this way; the caller still parses the whole
    reply at the end (that parse is the authority: a reply that breaks later is an error).
    """

    def __init__(self, sink: ReplySink, plan_text: Callable[[str], str] | None = None) -> None:
        """``plan_text`` maps each action string before it goes on (friendly names)."""
        self._sink = sink
        self._plan_text = plan_text
        self._sentences = Sentences()
        self._depth = 0
        self._in_string = False
        self._escape = ""  # "" none; "\\" after a backslash; "u…" collecting \uXXXX
        self._expect_key = False
        self._key: list[str] = []
        self._in_key = False
        self._last_key = ""
        self._value: str | None = None  # the top-level key whose value is being read
        self._raw: list[str] = []  # the raw text of an actions value being read
        self._text: list[str] = []  # decoded response characters not yet fed to sentences
        self.actions_sent = False

    def feed(self, text: str) -> None:
        for c in text:
            self._char(c)
        self._words()

    def finish(self, actions: list[str]) -> None:
        """The whole reply has been parsed: the plan if it was not sent yet, then the tail."""
        if not self.actions_sent:
            self._send_actions(actions)
        self._words()
        for sentence in self._sentences.flush():
            self._sink.words(sentence)

    # ------------------------------------------------------------------ the scanner
    def _char(self, c: str) -> None:
        if self._value in ("actions", "action"):
            self._raw.append(c)
        if self._in_string:
            self._string_char(c)
            return
        if c == '"':
            self._in_string = True
            if self._depth == 1 and self._expect_key:
                self._in_key, self._key = True, []
            return
        if c in "{[":
            self._depth += 1
            if self._depth == 1:
                self._expect_key = True
            return
        if c in "}]":
            self._depth -= 1
            if self._depth == 1 and self._value in ("actions", "action"):
                self._end_actions()  # the array just closed
            elif self._depth == 0 and self._value is not None:
                self._end_value()
            return
        if self._depth == 1 and c == ":":
            self._value = self._last_key
            self._raw = []
            self._expect_key = False
        elif self._depth == 1 and c == ",":
            self._end_value()
            self._expect_key = True

    def _string_char(self, c: str) -> None:
        if self._escape:
            self._escaped(c)
            return
        if c == "\\":
            self._escape = "\\"
            return
        if c == '"':
            self._in_string = False
            if self._in_key:
                self._in_key = False
                self._last_key = "".join(self._key)[:40]
            elif self._depth == 1 and self._value == "response":
                self._value = None  # the response is complete
            return
        self._decoded(c)

    def _escaped(self, c: str) -> None:
        if self._escape == "\\":
            if c == "u":
                self._escape = "u"
                return
            self._escape = ""
            self._decoded(_ESCAPES.get(c, c))
            return
        self._escape += c
        if len(self._escape) == 5:  # u + four hex digits
            code, self._escape = self._escape[1:], ""
            with contextlib.suppress(ValueError):  # not hex: the final parse says malformed
                self._decoded(chr(int(code, 16)))

    def _decoded(self, c: str) -> None:
        if self._in_key:
            if len(self._key) < 40:
                self._key.append(c)
        elif self._depth == 1 and self._value == "response":
            self._text.append(c)

    def _end_value(self) -> None:
        if self._value in ("actions", "action") and not self.actions_sent:
            self._end_actions()
        self._value = None

    def _end_actions(self) -> None:
        raw = "".join(self._raw).strip().rstrip(",}").strip()
        self._value, self._raw = None, []
        try:
            value = json.loads(raw) if raw else []
        except (ValueError, RecursionError):
            return  # the final parse says what is wrong with it
        if value is None:
            value = []
        if isinstance(value, list) and all(isinstance(a, str) for a in value):
            self._send_actions(value)

    def _send_actions(self, actions: list[str]) -> None:
        if not self.actions_sent:
            self.actions_sent = True
            self._words()  # words decoded before the plan was complete go first, held or not
            mapped = self._plan_text
            self._sink.actions([mapped(a) for a in actions] if mapped else list(actions))

    def _words(self) -> None:
        if self._text:
            text, self._text = "".join(self._text), []
            for sentence in self._sentences.feed(text):
                self._sink.words(sentence)


@dataclass
class _ToolCall:
    """One tool call as its deltas arrive: its id, and its name and arguments in pieces."""

    id: str = ""
    name: str = ""
    arguments: str = ""

    def message(self) -> JsonObject:
        function = {"name": self.name, "arguments": self.arguments}
        return {"id": self.id, "type": "function", "function": function}


class ChatStream:
    """The events of one OpenAI chat-completion stream → one assistant message (as the
    non-streamed answer has it), with the words handed on as they arrive."""

    def __init__(
        self, mode: str, sink: ReplySink, plan_text: Callable[[str], str] | None = None
    ) -> None:
        self._sink = sink
        self._json = JsonReplyReader(sink, plan_text) if mode == "json" else None
        self._sentences = Sentences()
        self._content: list[str] = []
        self._calls: dict[int, _ToolCall] = {}
        self._events = 0

    def event(self, data: Any) -> None:
        """One decoded ``data:`` event; PlannerError when it is not a chunk of a completion."""
        self._events += 1
        if not isinstance(data, dict):
            raise PlannerError(f"malformed stream: event {self._events} is not an object")
        if "error" in data:
            detail = str(data["error"])[:120]
            raise PlannerError(f"the server reported an error in its stream: {detail}")
        choices = data.get("choices")
        if not choices:
            return  # a usage or keep-alive chunk
        if not isinstance(choices, list) or not isinstance(choices[0], dict):
            raise PlannerError(f"malformed stream: event {self._events} has no choices[0]")
        delta = choices[0].get("delta") or {}
        if not isinstance(delta, dict):
            raise PlannerError(f"malformed stream: event {self._events} has a bad delta")
        content = delta.get("content")
        if isinstance(content, str) and content:
            self._content.append(content)
            self._text(content)
        calls = delta.get("tool_calls")
        if calls:
            self._tool_deltas(calls)

    def message(self) -> JsonObject:
        """The assembled assistant message: content and tool calls, for the usual checks."""
        message: JsonDict = {"role": "assistant", "content": "".join(self._content)}
        if self._calls:
            message["tool_calls"] = [self._calls[i].message() for i in sorted(self._calls)]
        return {"choices": [{"message": message}]}

    def finish(self, actions: list[str]) -> None:
        """The reply has been read whole and checked: its plan, then the rest of its words."""
        if self._json is not None:
            self._json.finish(actions)
            return
        self._sink.actions(actions)
        for sentence in self._sentences.flush():
            self._sink.words(sentence)

    def _text(self, content: str) -> None:
        if self._json is not None:
            self._json.feed(content)
            return
        for sentence in self._sentences.feed(content):
            self._sink.words(sentence)

    def _tool_deltas(self, calls: Any) -> None:
        if not isinstance(calls, list):
            raise PlannerError(f"malformed stream: event {self._events} has bad tool_calls")
        for n, delta in enumerate(calls):
            if not isinstance(delta, dict):
                raise PlannerError(f"malformed stream: a tool call in event {self._events}")
            index = delta.get("index", len(self._calls) + n)
            if not isinstance(index, int) or not 0 <= index < MAX_TOOL_CALLS:
                raise PlannerError(
                    f"malformed stream: tool call index {str(index)[:20]} "
                    f"(at most {MAX_TOOL_CALLS} calls)"
                )
            call = self._calls.setdefault(index, _ToolCall())
            if isinstance(delta.get("id"), str):
                call.id = delta["id"]
            function = delta.get("function") or {}
            if not isinstance(function, dict):
                raise PlannerError(f"malformed stream: a tool call in event {self._events}")
            name = function.get("name")
            if isinstance(name, str):
                call.name += name
            elif isinstance(name, dict):
                call.name = json.dumps(name)
            arguments = function.get("arguments")
            if isinstance(arguments, str):
                call.arguments += arguments
            elif isinstance(arguments, dict):  # some servers send the arguments as an object
                call.arguments = json.dumps(arguments)
