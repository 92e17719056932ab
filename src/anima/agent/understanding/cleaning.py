"""Cleaning a command before it is matched: what ASR writes for "nod", who a gesture is for,
and a condition on the robot's own view."""

from __future__ import annotations

from anima.agent.understanding.lexicon import (
    ANSWERS,
    AUDIENCE,
    AUDIENCE_DETERMINERS,
    AUDIENCE_LEAD,
    CONDITIONS,
)

# what may follow a "not" that is a misheard "nod" ("not twice", "not your head", "not please")
_AFTER_NOD = frozenset(
    tuple(w.split())
    for w in (
        "",
        "twice",
        "three times",
        "two times",
        "once",
        "your head",
        "yes",
        "at me",
        "for me",
        "please",
        "for me please",
        "your head please",
        "twice please",
    )
)


def misheard_nod(toks: list[str]) -> bool:
    """ "not" first in a command is ASR's "nod" when what follows fits a nod (never "not now")."""
    return bool(toks) and toks[0] == "not" and tuple(toks[1:]) in _AFTER_NOD


def for_someone(toks: list[str]) -> int:
    """Where "to the audience", "for my friends" begins at the end of ``toks`` (else its
    length)."""
    for i in range(1, len(toks) - 1):
        if toks[i] not in AUDIENCE_LEAD:
            continue
        rest = toks[i + 1 :]
        while rest and rest[0] in AUDIENCE_DETERMINERS:
            rest = rest[1:]
        if rest and all(w in AUDIENCE for w in rest):
            return i
    return len(toks)


def unconditional(toks: list[str]) -> list[str]:
    """ "shake your head if you disagree" → "shake your head": a condition on the robot's own
    view is how people ask for a yes/no gesture; any other condition stays (not understood)."""
    for i in range(1, len(toks)):
        if toks[i] == "if" and tuple(toks[i + 1 :]) in CONDITIONS:
            head = toks[:i]
            if tuple(toks[i + 1 :]) in ANSWERS:  # a yes or a no: "shake your hand" is ASR's
                for j in range(1, len(head)):  # "head" (but "shake my hand if you agree" is one)
                    if head[j - 1] == "your" and head[j] in ("hand", "hands"):
                        head[j] = "head"
            return head
    return toks
