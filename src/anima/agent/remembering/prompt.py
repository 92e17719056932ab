"""What an LLM is told it remembers, per request, within a budget of tokens (docs/memory.md)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from anima.memory.store import EVERYONE

if TYPE_CHECKING:
    from anima.agent.remembering.people import Remembering

PROMPT_TOKENS = 1500  # the memory's share of a planner's prompt, at most
CHARS_PER_TOKEN = 4  # English text in GPT-style tokenizers: ~4 characters a token (an estimate)
PROMPT_SEARCHED = 40  # memories the request's words bring up, before the budget cuts


def tokens_of(text: str) -> int:
    """The tokens ``text`` costs in a prompt, estimated (:data:`CHARS_PER_TOKEN`)."""
    return -(-len(text) // CHARS_PER_TOKEN)


def memory_block(memory: Remembering, request: str, budget: int = PROMPT_TOKENS) -> str:
    """What an LLM planner is told it remembers, for ``request``: the person talking, then
    pinned memories, the memories sharing words with the request (best first), the person's
    newest — each once, until ``budget`` tokens; "" when there is nothing to tell."""
    person = memory.person
    head = (
        "What you remember from earlier conversations (use remember(what, who) to keep what a "
        "person tells you, remember(what, correct=True) when they say you misheard what they "
        "just told you, forget(...) when they ask you to):"
    )
    who = f"The person talking says their name is {person}." if person else ""
    people = [EVERYONE] + ([person] if person else [])
    store = memory.store
    candidates = [
        *[m for m in store.recent(limit=PROMPT_SEARCHED) if m.pinned],
        *memory.recall(request, limit=PROMPT_SEARCHED),
        *(store.recent(who=person, limit=PROMPT_SEARCHED) if person else []),
        *store.recent(who=EVERYONE, limit=PROMPT_SEARCHED // 4),
    ]
    lines, seen = [], set()
    used = tokens_of(head) + tokens_of(who) + 2
    for m in candidates:
        if m.id in seen or (m.who not in people and not m.pinned):
            continue
        seen.add(m.id)
        line = f"- {m.who}: {m.what}"
        cost = tokens_of(line) + 1
        if used + cost > budget:
            break
        lines.append(line)
        used += cost
    if not lines and not who:
        return ""
    return "\n".join(part for part in (head, who, *lines) if part)
