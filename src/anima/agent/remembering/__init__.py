"""The agent's memory: who is talking, ``remember`` and ``forget``, and the rules that
understand "my name is Ana", "remember that I like jazz", "what's my name", "what do I like",
"forget what I told you", "forget everything about me" (docs/memory.md).

:class:`Remembering` is the store (:class:`~anima.memory.store.MemoryStore`) plus what the
conversation knows now: the name of the person talking (the last name given; no face or voice
recognition, so a name lives until another is given or the conversation resets) and the
memories told since, for "forget what I told you". The rule planner asks
:func:`understand_memory` before its other rules; a request none of these rules fits goes on to
them unchanged. ``remember`` and ``forget`` are actions of the registry (:func:`register_memory`),
so a plan from any planner, MCP or a door is validated like any other step.

Memories are kept in the person's own words ("I like jazz", about Ana) and said back in the
robot's ("You like jazz.").

The package: :mod:`.people` (:class:`Remembering`, the file opened, the actions), :mod:`.talk`
(the rule planner's phrasings), :mod:`.prompt` (what an LLM is told), :mod:`.words`.
"""

from anima.agent.remembering.people import (
    Forgotten,
    Remembering,
    open_memory,
    register_memory,
    shared_memory,
)
from anima.agent.remembering.prompt import PROMPT_TOKENS, memory_block, tokens_of
from anima.agent.remembering.talk import understand_memory
from anima.agent.remembering.words import first_person, second_person

__all__ = [
    "PROMPT_TOKENS",
    "Forgotten",
    "Remembering",
    "first_person",
    "memory_block",
    "open_memory",
    "register_memory",
    "second_person",
    "shared_memory",
    "tokens_of",
    "understand_memory",
]
