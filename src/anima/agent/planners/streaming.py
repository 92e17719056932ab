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
from dataclasses import dataclass, field
from typing import Any

from anima.agent.planners.base import ReplySink
from anima.errors import PlannerError
from anima.wire.jsontypes import JsonDict, JsonObject

MAX_TOOL_CALLS = 50  # a plan has at most this many steps (plan.MAX_STEPS): more is refused


_SENTENCE_END = re.compile(r"[.!?…]+[\"')\]]*\s+")
_END_CHARS = ".!?…\"')]"  # what a sentence end begins with, before its white space
_MAX_TAIL = 64  # characters of the text before a piece scanned again with it (see feed)


class Sentences:
    """Text arriving in pieces → whole sentences (an end mark followed by white space), so the
    speech can start on the first while the rest arrives; :meth:`flush` gives the tail.

    Each piece is scanned once: the text since the last sentence end is kept as a list of
    pieces (joined when a sentence ends), and only its last few end marks and quotes are
    scanned again with the next piece (a sentence end may straddle two). Rescanning and
    re-concatenating the whole unfinished text on every piece made a long stream without a
    sentence end quadratic: 900 kB in 100-byte pieces took 12 s of CPU."""

    def __init__(self) -> None:
        self._parts: list[str] = []  # the text since the last sentence end, but its tail
        self._tail = ""  # its end that a sentence end may begin in (marks and quotes)

    def feed(self, text: str) -> Iterator[str]:
        scan = self._tail + text
        start = 0
        for match in _SENTENCE_END.finditer(scan):
            head = "".join(self._parts) if start == 0 else ""
            self._parts = []
            sentence = (head + scan[start : match.end()]).strip()
            start = match.end()
            if sentence:
                yield sentence
        rest = scan[start:]
        keep = len(rest)
        while keep > 0 and len(rest) - keep < _MAX_TAIL and rest[keep - 1] in _END_CHARS:
            keep -= 1
        if rest[:keep]:
            self._parts.append(rest[:keep])
        self._tail = rest[keep:]

    def flush(self) -> Iterator[str]:
        rest = ("".join(self._parts) + self._tail).strip()
        self._parts, self._tail = [], ""
        if rest:
            yield rest


_IN_STRING = re.compile(r'["\\]')  # what ends a run of plain characters inside a string
_OUTSIDE = re.compile(r'["{}\[\],:]')  # and outside one
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
        i, n = 0, len(text)
        while i < n:
            if self._escape:  # inside an escape: one character at a time
                self._char(text[i])
                i += 1
                continue
            stop = (_IN_STRING if self._in_string else _OUTSIDE).search(text, i)
            end = stop.start() if stop is not None else n
            if end > i:
                self._run(text[i:end])  # characters that change no state, taken at once
            if stop is not None:
                self._char(text[end])
            i = end + 1
        self._words()

    def finish(self, actions: list[str]) -> None:
        """The whole reply has been parsed: the plan if it was not sent yet, then the tail."""
        if not self.actions_sent:
            self._send_actions(actions)
        self._words()
        for sentence in self._sentences.flush():
            self._sink.words(sentence)

    # ------------------------------------------------------------------ the scanner
    def _run(self, run: str) -> None:
        """Characters between two that matter (quotes, backslashes, brackets, commas, colons):
        kept as one slice where they are kept at all. One list entry per character cost a
        string object each for any character past Latin-1 (80 bytes for 3 bytes of UTF-8)."""
        if self._value in ("actions", "action"):
            self._raw.append(run)
        if not self._in_string:
            return
        if self._in_key:
            self._key.extend(run[: max(0, 40 - len(self._key))])
        elif self._depth == 1 and self._value == "response":
            self._text.append(run)

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
    name: list[str] = field(default_factory=list)  # pieces, joined once (not += each time)
    arguments: list[str] = field(default_factory=list)

    def message(self) -> JsonObject:
        function = {"name": "".join(self.name), "arguments": "".join(self.arguments)}
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
                call.name.append(name)
            elif isinstance(name, dict):
                call.name = [json.dumps(name)]
            arguments = function.get("arguments")
            if isinstance(arguments, str):
                call.arguments.append(arguments)
            elif isinstance(arguments, dict):  # some servers send the arguments as an object
                call.arguments = [json.dumps(arguments)]
