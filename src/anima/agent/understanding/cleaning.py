"""Cleaning a command before it is matched: what ASR writes for "nod", who a gesture is for,
a condition on the robot's own view, and what Whisper's decoder adds (a clause said twice, its
prompt run on after the request)."""

from __future__ import annotations

from anima.agent.understanding.lexicon import (
    ANSWERS,
    AUDIENCE,
    AUDIENCE_DETERMINERS,
    AUDIENCE_LEAD,
    CONDITIONS,
)
from anima.agent.understanding.words import PUNCTUATION

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
    toks = _your_head(toks, after="shake")
    for i in range(1, len(toks)):
        if toks[i] == "if" and tuple(toks[i + 1 :]) in CONDITIONS:
            if tuple(toks[i + 1 :]) in ANSWERS:  # a yes or a no: "nod your hand if you agree"
                return _your_head(toks[:i])
            return toks[:i]
    return toks


def _your_head(toks: list[str], *, after: str = "") -> list[str]:
    """ "your hand(s)" → "your head" (after ``after``, when given): Whisper's "head". The
    robot shakes *my* hand, or hands with me ("shake my hand", "shake hands"), never its own
    hand; and only a head answers agree/disagree ("shake my hand if you agree" is a
    handshake)."""
    if after and after not in toks:
        return toks
    out = list(toks)
    for j in range(toks.index(after) + 2 if after else 1, len(out)):
        if out[j - 1] == "your" and out[j] in ("hand", "hands"):
            out[j] = "head"
    return out


def unrepeated(toks: list[str]) -> list[str]:
    """ "look down, look down, at the floor" → "look down, at the floor": a clause said again
    right after itself, across a comma, is Whisper's decoder starting over (a person who wants
    it twice says "twice" or "and again"); the words' own stutters are :func:`unstutter`'s."""
    out: list[str] = []
    last: list[str] = []
    clause: list[str] = []
    for tok in [*toks, ","]:
        if tok not in PUNCTUATION:
            clause.append(tok)
            continue
        if clause and clause != last:
            out.extend(clause)
        if clause:
            last = clause
        if clause or (out and out[-1] not in PUNCTUATION):
            out.append(tok)
        clause = []
    return out[:-1]


def without_echo(toks: list[str], vocabulary: list[tuple[str, ...]]) -> list[str]:
    """ "let's shake hands, look up, lo" → "let's shake hands": Whisper ran past the request
    into its prompt's list of phrases (``vocabulary``, in the prompt's order) and was cut off
    mid-word. Only a run that ends in such a cut word is dropped — each clause of it the next
    phrase of the prompt, the last a phrase's beginning that is no word of the vocabulary —
    so "nod, wave" said on purpose stays two steps."""
    clauses = _clauses(toks)
    if len(clauses) < 3 or not vocabulary:
        return toks
    known = {w for phrase in vocabulary for w in phrase}
    cut = " ".join(clauses[-1])
    if not cut or cut.split()[-1] in known:
        return toks
    nexts = [i for i, p in enumerate(vocabulary) if " ".join(p).startswith(cut)]
    for start in nexts:
        k, i = len(clauses) - 1, start
        while k > 1 and i > 0 and tuple(clauses[k - 1]) == vocabulary[i - 1]:
            k, i = k - 1, i - 1
        if k < len(clauses) - 1:  # at least one whole phrase of the prompt before the cut
            return [t for c in clauses[:k] for t in [*c, ","]][:-1]
    return toks


def _clauses(toks: list[str]) -> list[list[str]]:
    out: list[list[str]] = [[]]
    for tok in toks:
        if tok in PUNCTUATION:
            if out[-1]:
                out.append([])
        else:
            out[-1].append(tok)
    return out if out[-1] else out[:-1]
