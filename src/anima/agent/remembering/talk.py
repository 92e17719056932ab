"""The rule planner's memory talk: "my name is Ana", "remember that I like jazz", "what's my
name", "what do I like", "forget what I told you", "forget everything about me"."""

from __future__ import annotations

import re

from anima.agent.remembering.people import Remembering
from anima.agent.remembering.words import (
    FILLER,
    corrected,
    first_person,
    is_whole_fact,
    second_person,
    sentence,
)
from anima.agent.understanding.result import Understanding
from anima.errors import InvalidCommandError
from anima.memory.store import EVERYONE, clean_what, words

MAX_NAME_WORDS = 3
MAX_SAID = 3  # memories said back for "what do you know about me"
_OPENERS = ("hey robot", "ok robot", "okay robot", "hey", "ok", "okay", "so", "well", "please")
_TRAILERS = ("by the way", "please", "thanks", "thank you", "okay", "ok", "again")
_NAME = re.compile(
    r"^(?:hi|hello)?\s*(?P<how>my name is|my name's|call me|you can call me|i am called|"
    r"i'm called|people call me|the name is|the name's)\s+(?P<name>[^\W\d_][^\W\d_' -]*)$"
)
_CALL_ME = ("call me", "you can call me")  # "call me later": a name only when capitalised
_IAM = re.compile(  # "I'm Bob": only a capitalised word (Whisper writes names so), not "I'm tired"
    r"^(?:[Hh]i|[Hh]ello)?[, ]*\b(?:[Ii] am|[Ii]'m)\s+(?P<name>[^\W\d_][^\W\d_'-]*)[.!]?$"
)
_REMEMBER = re.compile(
    r"^(?:can you |could you |will you |would you )?(?:please )?"
    r"(?:remember|don't forget|do not forget|keep in mind|make a note|note)"
    r"(?: this| for me| for later)?(?: that)?[,:]?\s+(?P<fact>.+)$"
)
_ASK_NAME = re.compile(
    r"^(?:what's|what is|whats) my name|^(?:do|did) you (?:know|remember|still know) "
    r"(?:my name|who i am)|^who am i$|^(?:tell me|say) my name$"
)
_ABOUT_ME = re.compile(
    r"^what (?:do|did) you (?:know|remember) about me|^what (?:did|have) i (?:tell|told) you"
    r"|^what do you remember$"
)
_FORGET_ALL = re.compile(
    r"^(?:please )?(?:forget|delete|erase) (?:everything|all|anything)(?: you know)? about me"
    r"|^(?:please )?forget (?:me|who i am)$|^(?:please )?(?:forget|delete|erase) my memories"
)
_FORGET_LAST = re.compile(
    r"^(?:please )?(?:forget|delete|erase|never mind) (?:what i (?:just )?(?:told you|said)|"
    r"that|it|this|the last thing(?: i said| i told you)?)$"
)
# "no, I said Lyon" after "OK, I'll remember that you live in light on"
_CORRECT = re.compile(
    r"^(?:(?:no|nope|not quite|wrong|not that)\s+)?i (?:said|meant)(?: that)?\s+(?P<said>.+)$"
    r"|^(?:no|nope)\s+(?:it's|it is)\s+(?P<it>.+)$"
)
_FORGET_ABOUT = re.compile(r"^(?:please )?(?:forget|delete|erase) (?:that )?(?P<what>.+)$")
# a fact about the person said plainly: "my favourite colour is blue" (not a command)
_MY_FACT = re.compile(r"^my (?!name\b)[a-z' ]{1,40}? (?:is|are) .+$")
_QUESTION = re.compile(
    r"^(?:what|where|when|who|which|how|do you (?:know|remember)|did i tell you|am i|do i|"
    r"did i|have i|was i|is my|are my|was my)\b"
)


def _plain(text: str) -> str:
    """Lower case, no punctuation but apostrophes, the openers and trailers dropped."""
    s = re.sub(r"[^\w' -]+", " ", text.lower().replace("’", "'"))
    s = " ".join(s.split())
    changed = True
    while changed:
        changed = False
        for opener in _OPENERS:
            if s.startswith(opener + " "):
                s, changed = s[len(opener) + 1 :], True
        for trailer in _TRAILERS:
            if s.endswith(" " + trailer):
                s, changed = s[: -len(trailer) - 1], True
    return s


def _call(name: str, **args: object) -> str:
    return f"{name}({', '.join(f'{k}={v!r}' for k, v in args.items() if v not in ('', False))})"


def understand_memory(
    text: str, memory: Remembering, *, robot_name: str = ""
) -> Understanding | None:
    """What ``text`` asks of the memory, or None when it is not about memory (the rule
    planner's other rules then decide)."""
    plain = _plain(text)
    for prefix in (robot_name.lower(), "robot"):
        if prefix and plain.startswith(prefix + " "):
            plain = plain[len(prefix) + 1 :]
    if not plain:
        return None
    name = _name_given(text, plain)
    if name is not None:
        given = f"my name is {name}".lower()
        met = any(m.what.lower() == given for m in memory.store.recent(who=name, limit=50))
        return Understanding(
            kind="act",
            actions=[_call("remember", what=f"my name is {name}", who=name)],
            response=f"Welcome back, {name}." if met else f"Nice to meet you, {name}.",
            why=f"memory: the person's name, {name}" + (" (met before)" if met else ""),
        )
    put_right = _CORRECT.match(plain)
    said = put_right.group("said") or put_right.group("it") if put_right else ""
    # a word or three ("no, I said Lyon"), or the whole fact again ("I said I live in Lyon");
    # not "I said hello to Bob yesterday"
    if said and (len(said.split()) <= 3 or is_whole_fact(said)):
        return _correction(_as_said(said, text), memory)
    told = _REMEMBER.match(plain)
    fact = told.group("fact") if told else (plain if _MY_FACT.match(plain) else None)
    if fact is not None:  # "remember that I like jazz", "my favourite colour is blue"
        fact = first_person(_as_said(fact, text))
        if (refused := _unkept(fact)) is not None:
            return refused
        return Understanding(
            kind="act",
            actions=[_call("remember", what=fact)],
            response=f"OK, I'll remember that {second_person(fact)}.",
            why="memory: remember" if told else "memory: a fact about the person",
        )
    if _FORGET_ALL.match(plain):
        person = memory.person  # read once: each read may ask attention who is there
        if person is None:
            return Understanding(
                kind="answer",
                response="I don't know who you are: tell me your name first.",
                why="memory: forget everything, nobody named",
            )
        return Understanding(
            kind="act",
            actions=[_call("forget", who=person, everything=True)],
            response=f"OK, {person}, I've forgotten everything about you.",
            why="memory: forget everything about the person",
        )
    if _FORGET_LAST.match(plain):
        return Understanding(
            kind="act",
            actions=[_call("forget", last=True)],
            response="OK, I've forgotten it.",
            why="memory: forget the last thing told",
        )
    if _ASK_NAME.match(plain):
        person = memory.person
        response = (
            f"Your name is {person}." if person else "I don't know your name yet. What is it?"
        )
        return Understanding(kind="answer", response=response, why="memory: the person's name")
    if _ABOUT_ME.match(plain):
        who = memory.person or EVERYONE
        known = [
            m
            for m in memory.store.recent(who=who, limit=MAX_SAID + 1)
            if not m.what.lower().startswith("my name is")
        ][:MAX_SAID]
        if not known:
            return Understanding(
                kind="answer",
                response="You haven't told me anything to remember yet.",
                why="memory: nothing about the person",
            )
        said = " ".join(sentence(second_person(m.what)) for m in known)
        return Understanding(kind="answer", response=said, why="memory: about the person")
    if m := _FORGET_ABOUT.match(plain):
        about = m.group("what")
        if {w for w in words(about) if w not in FILLER}:
            return Understanding(
                kind="act",
                actions=[_call("forget", about=first_person(about))],
                response="OK, I've forgotten that.",
                why=f"memory: forget {about!r}",
            )
    if _QUESTION.match(plain) and re.search(r"\b(?:my|i|me|i'm)\b", plain):
        found = memory.recall(plain, limit=1)
        if found:
            return Understanding(
                kind="answer",
                response=sentence(second_person(found[0].what)),
                why=f"memory: recalled #{found[0].id}",
            )
        # "what's my favourite colour", "where did I park", never told ("how do I …" is not
        # about what the person told: it goes on to the other rules)
        if re.search(r"\bmy\b|\b(?:did|was|were|have) i\b", plain):
            return Understanding(
                kind="answer",
                response="I don't know that yet. Tell me, and I'll remember it.",
                why="memory: nothing recalled",
            )
    return None


def _unkept(fact: str) -> Understanding | None:
    """The answer when remember() would refuse ``fact`` (never promise it), else None."""
    try:
        clean_what(fact)
    except InvalidCommandError as exc:
        return Understanding(
            kind="answer",
            response="Sorry, I can't remember that: tell me in a shorter sentence.",
            why=f"memory: not kept ({exc})",
        )
    return None


def _as_said(fragment: str, text: str) -> str:
    """``fragment`` (of the lower-cased request) with its words cased as ``text`` had them,
    except the request's first word (a sentence's capital): "i live in lyon" → "i live in
    Lyon" from "Remember that I live in Lyon.", so a name is kept and said back as given."""
    said = re.findall(r"[\w'’-]+", text)[1:]
    cased = {w.lower(): w for w in reversed(said) if w != w.lower()}
    return " ".join(cased.get(w, w) for w in fragment.split())


def _correction(said: str, memory: Remembering) -> Understanding:
    """The last memory told, put right with what the person says they said."""
    last = memory.last_told()
    if last is None:
        return Understanding(
            kind="answer",
            response="Sorry, I wasn't told anything to put right just now.",
            why="memory: a correction, nothing told in this conversation",
        )
    fact = corrected(last.what, first_person(said))
    if (refused := _unkept(fact)) is not None:
        return refused
    return Understanding(
        kind="act",
        actions=[_call("remember", what=fact, correct=True)],
        response=f"Sorry. I'll remember that {second_person(fact)}.",
        why=f"memory: #{last.id} put right ({last.what!r} → {fact!r})",
    )


def _name_given(text: str, plain: str) -> str | None:
    m = _NAME.match(plain)
    if m is not None:
        name = m.group("name").strip(" '-")
        said_as = re.search(rf"\b{re.escape(name)}\b", text, re.IGNORECASE)
        if m.group("how") in _CALL_ME and (said_as is None or not said_as.group(0)[0].isupper()):
            return None
    else:
        original = re.sub(r"[^\w' -]+", " ", text).strip()
        original = re.sub(r"^(?:[Hh]ey|[Oo]k|[Oo]kay|[Ss]o|[Ww]ell)\s+", "", original)
        found = _IAM.match(original)
        if found is None or not found.group("name")[0].isupper():
            return None
        name = found.group("name")
    parts = name.split()
    if not 1 <= len(parts) <= MAX_NAME_WORDS:
        return None
    return " ".join(p[:1].upper() + p[1:] for p in parts)
