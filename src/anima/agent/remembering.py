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
"""

from __future__ import annotations

import collections
import logging
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from anima.agent.actions import ActionRegistry, ActionResult, make_action
from anima.agent.context import ActionContext
from anima.agent.understanding.result import Understanding
from anima.errors import AnimaError, ConfigError
from anima.memory.store import EVERYONE, Memory, MemoryStore, words

if TYPE_CHECKING:
    from anima.config.memory import MemoryConfig

log = logging.getLogger(__name__)

MAX_NAME_WORDS = 3
TOLD_KEPT = 20  # memories told in this conversation that "forget what I told you" can reach
MAX_SAID = 3  # memories said back for "what do you know about me"

# words that carry no meaning for a search ("what is my …", "do you remember …")
_FILLER_WORDS = """
    a an the is are am was were be been do does did what what's whats where when who which how
    why my me i i'm im you your yours you're please tell remember know recall again can could
    would will to of in on at for about that this it and or so robot hey ok okay now still
    have has had told said say
"""
_FILLER = frozenset(_FILLER_WORDS.split())
_OPENERS = ("hey robot", "ok robot", "okay robot", "hey", "ok", "okay", "so", "well", "please")
_TRAILERS = ("by the way", "please", "thanks", "thank you", "okay", "ok", "again")
_NAME = re.compile(
    r"^(?:hi|hello)?\s*(?:my name is|my name's|call me|you can call me|i am called|i'm called|"
    r"people call me|the name is|the name's)\s+(?P<name>[a-z][a-z' -]*)$"
)
_IAM = re.compile(  # "I'm Bob": only a capitalised word (Whisper writes names so), not "I'm tired"
    r"^(?:[Hh]i|[Hh]ello)?[, ]*\b(?:[Ii] am|[Ii]'m)\s+(?P<name>[A-Z][a-zA-Z'-]+)[.!]?$"
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
_FORGET_ABOUT = re.compile(r"^(?:please )?(?:forget|delete|erase) (?:that )?(?P<what>.+)$")
# a fact about the person said plainly: "my favourite colour is blue" (not a command)
_MY_FACT = re.compile(r"^my (?!name\b)[a-z' ]{1,40}? (?:is|are) .+$")
_QUESTION = re.compile(
    r"^(?:what|where|when|who|which|how|do you (?:know|remember)|did i tell you|am i|do i|"
    r"did i|have i|was i|is my|are my|was my)\b"
)
# the irregular verbs people use of themselves: a question in one form ("what did I break")
# finds a memory in another ("I broke my arm"); stemming covers the regular ones
_IRREGULAR = """
    be was were been | begin began begun | break broke broken | bring brought | build built |
    buy bought | catch caught | choose chose chosen | come came | do did done | drink drank drunk |
    drive drove driven | eat ate eaten | fall fell fallen | feel felt | fight fought | find found |
    fly flew flown | forget forgot forgotten | get got gotten | give gave given | go went gone |
    grow grew grown | have had | hear heard | hold held | keep kept | know knew known |
    leave left | lend lent | lose lost | make made | meet met | pay paid | read | ride rode ridden |
    ring rang rung | rise rose risen | run ran | say said | see saw seen | sell sold | send sent |
    sing sang sung | sit sat | sleep slept | speak spoke spoken | spend spent | stand stood |
    steal stole stolen | swim swam swum | take took taken | teach taught | tell told |
    think thought | throw threw thrown | wake woke woken | wear wore worn | win won | write wrote
    written
"""
_FORMS = {form: tuple(group.split()) for group in _IRREGULAR.split("|") for form in group.split()}
# person → robot: what the person said about themselves, said back to them
_SWAP = {
    "i": "you", "i'm": "you're", "im": "you're", "me": "you", "my": "your", "mine": "yours",
    "myself": "yourself", "am": "are", "i've": "you've", "i'll": "you'll", "i'd": "you'd",
    "was": "were",
}  # fmt: skip
_SWAP_BACK = {"you": "I", "your": "my", "you're": "I'm", "yours": "mine", "are": "am"}


def second_person(text: str) -> str:
    """The person's words said back to them: "I like jazz" → "you like jazz"."""
    out = []
    for token in text.split():
        core = token.rstrip(".,!?;:")
        tail = token[len(core) :]
        swapped = _SWAP.get(core.lower())
        out.append((swapped if swapped is not None else core) + tail)
    return " ".join(out)


def first_person(text: str) -> str:
    """A fact told by the person as the robot heard it addressed ("that you like jazz" from
    "remember that I like jazz" stays "I like jazz"; "I" is capitalised)."""
    return " ".join("I" if t == "i" else ("I'm" if t == "i'm" else t) for t in text.split())


def sentence(text: str) -> str:
    text = text.strip().rstrip(".!?,;:")
    return text[:1].upper() + text[1:] + "." if text else ""


def _key(what: str) -> tuple[str, ...] | None:
    """What a memory says something about, when a later one can replace it: "my favourite
    colour is blue" → ("favourite", "colour"); None for a memory with no such key."""
    m = re.match(r"^my ([a-z' ]{1,40}?) (?:is|are|was)\b", what.lower())
    return tuple(m.group(1).split()) if m else None


@dataclass(frozen=True, kw_only=True)
class Forgotten:
    rows: int  # rows removed (with what they superseded)
    what: tuple[str, ...]  # the memories forgotten, as they were


class Remembering:
    """The store and who is talking now (see the module docstring)."""

    def __init__(self, store: MemoryStore) -> None:
        self.store = store
        self._lock = threading.Lock()
        self._person: str | None = None
        self._told: collections.deque[int] = collections.deque(maxlen=TOLD_KEPT)
        # told each name given (anima.build: attention names the track of whoever speaks)
        self.on_name: list[Callable[[str], object]] = []
        # asked who is there when nobody gave a name in this conversation (anima.build:
        # attention's track of the person looked at, named earlier in its life)
        self.who_is_here: Callable[[], str | None] | None = None
        self.on_forget_person: list[Callable[[str], object]] = []  # attention drops the name

    @property
    def person(self) -> str | None:
        """The name of the person talking: the last one given in this conversation, else the
        name attention's track of the person looked at carries (:attr:`who_is_here`)."""
        with self._lock:
            person = self._person
        if person is None and self.who_is_here is not None:
            try:
                person = self.who_is_here()
            except Exception:  # attention failing never loses the conversation
                log.exception("who_is_here failed")
        return person

    def reset(self) -> None:
        """A new conversation: nobody named yet, nothing told."""
        with self._lock:
            self._person = None
            self._told.clear()

    def remember(self, what: str, who: str = "") -> Memory:
        """Keep ``what`` about ``who`` (the person talking when empty, else ``everyone``). A
        name ("my name is Ana") makes Ana the person talking. A memory with the same subject
        ("my favourite colour is …") replaces it; the same words again are kept once."""
        person = who.strip() or self.person or EVERYONE
        name = re.match(r"^my name is (.+)$", what.strip(), re.IGNORECASE)
        replaced = self._replaced(what, person)
        old = self.store.get(replaced) if replaced is not None else None
        if old is not None and old.what.lower() == " ".join(what.split()).lower():
            memory = old  # told again in the same words: kept once
        else:
            memory = self.store.add(what, who=person, supersedes=replaced)
        with self._lock:
            named = name is not None and person != EVERYONE
            if named:
                self._person = memory.who
            self._told.append(memory.id)
        if named:
            for hook in list(self.on_name):
                try:
                    hook(memory.who)
                except Exception:  # a listener's failure never loses the memory
                    log.exception("a name's listener failed")
        return memory

    def _replaced(self, what: str, who: str) -> int | None:
        key = _key(what)
        for old in self.store.recent(who=who, limit=200):
            if old.what.lower() == " ".join(what.split()).lower():
                return old.id
            if key is not None and _key(old.what) == key:
                return old.id
        return None

    def recall(self, question: str, limit: int = 3) -> list[Memory]:
        """The person's (and everyone's) memories that share meaning words with ``question``,
        best first."""
        terms = [w for w in words(question) if w not in _FILLER]
        if not terms:
            return []
        terms += [form for w in terms for form in _FORMS.get(w, ()) if form not in terms]
        who = [EVERYONE] + ([self.person] if self.person else [])
        return self.store.search(" ".join(terms), who=who, limit=limit)

    def forget(
        self, about: str = "", who: str = "", *, everything: bool = False, last: bool = False
    ) -> Forgotten:
        """Forget: ``last`` the last memory told in this conversation; ``everything`` every
        memory about ``who`` (or the person talking); else the person's memories matching
        ``about`` (every word of it that carries meaning)."""
        person = who.strip() or self.person
        if last:
            with self._lock:
                told = list(self._told)
            for memory_id in reversed(told):
                memory = self.store.get(memory_id)
                if memory is not None:
                    rows = self.store.forget([memory_id])
                    with self._lock:
                        if memory_id in self._told:
                            self._told.remove(memory_id)
                    return Forgotten(rows=rows, what=(memory.what,))
            return Forgotten(rows=0, what=())
        if everything:
            if person is None:
                return Forgotten(rows=0, what=())
            gone = tuple(m.what for m in self.store.recent(who=person, limit=10_000))
            rows = self.store.forget_person(person)
            with self._lock:
                if self._person is not None and self._person.lower() == person.lower():
                    self._person = None
            for hook in list(self.on_forget_person):
                try:
                    hook(person)
                except Exception:  # the memory is forgotten whatever a listener does
                    log.exception("a forgotten person's listener failed")
            return Forgotten(rows=rows, what=gone)
        terms = {w for w in words(about) if w not in _FILLER}
        if not terms:
            return Forgotten(rows=0, what=())
        who_list = [person] if person else [EVERYONE]
        matches = [
            m
            for m in self.store.search(" ".join(sorted(terms)), who=who_list, limit=50)
            if terms <= set(words(m.what))
        ]
        rows = self.store.forget(m.id for m in matches)
        return Forgotten(rows=rows, what=tuple(m.what for m in matches))


# ---------------------------------------------------------------------- the LLM's context
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
        "person tells you, forget(...) when they ask you to):"
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


# ---------------------------------------------------------------------- the rules
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
    told = _REMEMBER.match(plain)
    fact = told.group("fact") if told else (plain if _MY_FACT.match(plain) else None)
    if fact is not None:  # "remember that I like jazz", "my favourite colour is blue"
        fact = first_person(fact)
        return Understanding(
            kind="act",
            actions=[_call("remember", what=fact)],
            response=f"OK, I'll remember that {second_person(fact)}.",
            why="memory: remember" if told else "memory: a fact about the person",
        )
    if _FORGET_ALL.match(plain):
        if memory.person is None:
            return Understanding(
                kind="answer",
                response="I don't know who you are: tell me your name first.",
                why="memory: forget everything, nobody named",
            )
        return Understanding(
            kind="act",
            actions=[_call("forget", who=memory.person, everything=True)],
            response=f"OK, {memory.person}, I've forgotten everything about you.",
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
        if {w for w in words(about) if w not in _FILLER}:
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
        if re.search(r"\bmy\b", plain):  # "what's my favourite colour", never told
            return Understanding(
                kind="answer",
                response="I don't know that yet. Tell me, and I'll remember it.",
                why="memory: nothing recalled",
            )
    return None


def _name_given(text: str, plain: str) -> str | None:
    m = _NAME.match(plain)
    if m is not None:
        name = m.group("name").strip(" '-")
    else:
        original = re.sub(r"[^\w' -]+", " ", text).strip()
        original = re.sub(r"^(?:[Hh]ey|[Oo]k|[Oo]kay|[Ss]o|[Ww]ell)\s+", "", original)
        found = _IAM.match(original)
        if found is None:
            return None
        name = found.group("name")
    parts = name.split()
    if not 1 <= len(parts) <= MAX_NAME_WORDS:
        return None
    return " ".join(p[:1].upper() + p[1:] for p in parts)


# ---------------------------------------------------------------------- the actions
def shared_memory(
    agent: object, config: MemoryConfig, registry: ActionRegistry
) -> Remembering | None:
    """``remember`` and ``forget`` for another door's ``registry`` (MCP's): on the running
    agent's memory when it has one (the same person talking, the same file), else on the file
    ``agent.memory`` names; None when memory is off."""
    memory = getattr(agent, "memory", None)
    if isinstance(memory, Remembering):
        register_memory(registry, memory)
        return memory
    return open_memory(config, registry)


def open_memory(config: MemoryConfig, registry: ActionRegistry) -> Remembering | None:
    """The memory file ``agent.memory`` names, its ``remember`` and ``forget`` added to
    ``registry``; None when memory is off."""
    if not config.enabled:
        return None
    try:
        store = MemoryStore(config.file(), max_memories=config.max_memories)
    except ConfigError as exc:
        if config.path:  # a file the operator named: the start stops, naming it
            raise
        # the default place cannot be written (a read-only home): the robot runs, forgetting
        log.warning("%s: running without memory (set agent.memory.path)", exc)
        return None
    memory = Remembering(store)
    register_memory(registry, memory)
    return memory


def register_memory(registry: ActionRegistry, memory: Remembering) -> None:
    """Add ``remember`` and ``forget`` on ``memory`` to ``registry``."""

    def remember(ctx: ActionContext, what: str, who: str = "") -> ActionResult:
        """Remember something a person said, to recall it later (even after a restart).

        Args:
            what: the fact in the person's own words ("I like jazz", "my name is Ana")
            who: whose it is (a name); empty: the person talking, else everyone
        """
        try:
            kept = memory.remember(what, who)
        except AnimaError as exc:
            return (False, str(exc))
        return (True, f"remembered #{kept.id} about {kept.who}: {kept.what}")

    def forget(
        ctx: ActionContext, about: str = "", who: str = "", everything: bool = False,
        last: bool = False,
    ) -> ActionResult:  # fmt: skip
        """Forget memories: the last thing told, everything about a person, or what matches.

        Args:
            about: words of the memory to forget ("that I like jazz")
            who: whose memories (a name); empty: the person talking
            everything: forget every memory about that person
            last: forget the last thing told in this conversation
        """
        try:
            gone = memory.forget(about, who, everything=everything, last=last)
        except AnimaError as exc:
            return (False, str(exc))
        if not gone.rows:
            return (False, "nothing to forget matched")
        return (True, f"forgot {gone.rows} memor{'y' if gone.rows == 1 else 'ies'}")

    registry.add(make_action(remember))
    registry.add(make_action(forget))
