"""The memory bench's scripted model: a chat-completions server on 127.0.0.1 whose replies are
made from each request (told a name or a fact it calls ``remember``; asked, it answers with the
memory of its prompt sharing the most words with the question)."""

from __future__ import annotations

import json
import re
from typing import Any

from anima.agent.remembering import second_person
from anima.memory.store import words
from anima.testing.llm import Scripted, ScriptedOpenAIServer, completion

_NAME = re.compile(r"my name is (?P<name>\w+)", re.IGNORECASE)
_TOLD = re.compile(
    r"^(?:please )?(?:remember|don't forget|keep in mind)(?: that)?[, ]*(?P<fact>.+)$", re.I
)
_FILLER_WORDS = "what is my do i am was where when who which how the a an to of in on did does have"
_FILLER = frozenset(_FILLER_WORDS.split())


class ReadingModel(ScriptedOpenAIServer):
    """A chat-completions server whose every reply is made from the request (see the module
    docstring): told a name or a fact, it calls ``remember``; asked, it answers from the
    memory lines of its prompt; asked to forget everything, it calls ``forget``."""

    def __init__(self) -> None:
        super().__init__()
        self.prompts: list[str] = []

    def _fill(self, body: Any, request: Any) -> Any:
        messages = request.get("messages", []) if isinstance(request, dict) else []
        said = str(messages[-1].get("content", "")) if messages else ""
        memory = "\n".join(
            str(m.get("content", ""))
            for m in messages[1:]
            if m.get("role") == "system" and "remember" in str(m.get("content", ""))
        )
        self.prompts.append(memory)
        text = said.strip().rstrip(".?!")
        if m := _NAME.search(text):
            name = m.group("name")
            return _call("remember", what=f"my name is {name}", who=name)
        if "forget everything about me" in text.lower():
            return _call("forget", everything=True)
        if m := _TOLD.match(text):
            return _call("remember", what=m.group("fact"))
        if text.lower().startswith("my "):
            return _call("remember", what=text)
        asked = set(words(text)) - _FILLER
        best, score = "", 0
        for line in memory.splitlines():
            if not line.startswith("- "):
                continue
            fact = line.split(": ", 1)[-1]
            common = len({w.split("'")[0] for w in words(fact)} & {w.split("'")[0] for w in asked})
            if common > score:
                best, score = fact, common
        return completion(second_person(best) + "." if best else "I don't remember that.")

    def reply_each(self, n: int) -> None:
        self.push(*[Scripted(body={}) for _ in range(n)])


def _call(name: str, **args: Any) -> Any:
    return completion(
        None,
        [
            {
                "id": f"call_{name}",
                "type": "function",
                "function": {"name": name, "arguments": json.dumps(args)},
            }
        ],
    )
