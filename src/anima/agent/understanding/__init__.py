"""Understanding a request without an LLM, from the action registry alone.

``understand("could you nod twice then smile", registry)`` →
``Understanding(kind="act", actions=["play_animation(name='nod')", …])``. In order:

1. **actions**: the request cut into commands (:mod:`.steps`), each matched against the
   registry's phrases and senses with its modifiers read out (:mod:`.matcher`) — paraphrases,
   counts, durations, directions and amounts, for the built-ins, the humanoid's and the user's
   own actions alike;
2. **questions and courtesies** about the robot: its name, what it can do, "how are you",
   "hello", "thank you" — answered from :class:`About` and the registry (:mod:`.talk`);
3. **as misheard**: only when neither reads it, each part may be a phrase of the registry it
   sounds like, or begin with a verb misheard ("take a blow" → bow; :mod:`.soundalike`);
4. **a refusal** naming what was asked and a few things it can do, when the words ask for
   something it has no action for ("make me a coffee");
5. otherwise **not understood**: "Sorry, I didn't understand “…”. I can wave, nod, …" (the
   words quoted back when short). Nothing is acted on a guess. ("I didn't catch that" is the
   conversation's, for words heard with too little confidence only.)

Before all this, what Whisper's decoder adds is taken off: a clause it said twice, and its
prompt's list run on after the request (:mod:`.cleaning`).

Everything is plain data and set operations on word stems: a request takes well under a
millisecond, needs no network and no model, and :attr:`Understanding.why` says which phrase or
sense matched.
"""

from __future__ import annotations

from collections.abc import Sequence

from anima.agent.actions import Action, ActionRegistry
from anima.agent.understanding.aliases import (
    Alias,
    aliases,
    asr_phrases,
    choice_aliases,
    prompt_phrases,
)
from anima.agent.understanding.cleaning import unrepeated, without_echo
from anima.agent.understanding.lexicon import AGAIN
from anima.agent.understanding.matcher import Matcher
from anima.agent.understanding.result import NOT_UNDERSTOOD, About, Kind, Understanding
from anima.agent.understanding.result import not_understood as _not_understood
from anima.agent.understanding.steps import understand_steps
from anima.agent.understanding.talk import (
    abilities,
    ability,
    ability_answer,
    answer,
    is_request,
    refusal,
    topic,
)
from anima.agent.understanding.words import PUNCTUATION, tokens, unstutter

MAX_CHARS = 1000  # a spoken request; a longer text is not one (and would be slow to cut up)
MAX_WORDS = 60


class Understander:
    """The registry compiled once (phrases, senses, patterns): :meth:`understand` per request.

    Build a new one when the registry changes (the rule planner builds one per registry)."""

    def __init__(self, registry: ActionRegistry, *, about: About | None = None) -> None:
        self.registry = registry
        self.about = about or About()
        ignored = (self.about.wake_phrase, self.about.name, "hey " + self.about.name)
        self._matcher = Matcher(registry, ignored=ignored)
        # Whisper's prompt lists these, the shortest first
        # (anima.listening.whisper.text.prompt_text)
        prompt = sorted(asr_phrases(registry), key=lambda p: len(p.split()))
        self._prompt = [tuple(tokens(p)) for p in prompt]
        self._can = abilities(
            registry, 5, self.about.offers
        )  # "wave, nod, shake my head, look around and…"

    def understand(self, text: str, *, previous: Sequence[str] = ()) -> Understanding:
        """``text`` understood; ``previous``: the plan of the last request ("do it again")."""
        if len(text) > MAX_CHARS:
            return self._not_understood(f"{len(text)} characters: longer than a spoken request")
        heard = len(text.split())  # before stutters are dropped: "walk " * 100 is no stutter
        if heard > MAX_WORDS:
            return self._not_understood(f"{heard} words: longer than a spoken request")
        toks = tokens(text, stutters=True)  # the matcher drops them, but not from free text
        toks = without_echo(unrepeated(toks), self._prompt)  # what Whisper's decoder added
        words = unstutter([t for t in toks if t not in PUNCTUATION])
        if not words:
            return self._not_understood("no words")
        stripped = self._matcher.strip(words)
        if tuple(stripped) in AGAIN:
            if not previous:
                return self._not_understood("nothing to do again")
            return Understanding(kind="act", actions=list(previous), why="again")
        asked = ability(self._addressed(words), lambda w: not self._matcher.unknown([w]))
        if asked is not None:
            has, verb = asked
            response = ability_answer(has, verb, self.registry)
            kind: Kind = "answer" if has else "refuse"
            return Understanding(kind=kind, response=response, why=f"ability: {verb}")
        steps = understand_steps(self._matcher, toks)
        if steps.match is not None:
            return Understanding(kind="act", actions=list(steps.match.actions), why=steps.match.why)
        about = None
        if len(words) <= 12:  # a question about the robot is short
            about = topic(words, self.about) or topic(stripped, self.about)
        if about is not None:
            response = answer(about, self.about, self.registry)
            return Understanding(kind="answer", response=response, why=f"question: {about}")
        alike = understand_steps(self._matcher, toks, sounds=True)  # as ASR may mishear it
        if alike.match is not None:
            return Understanding(kind="act", actions=list(alike.match.actions), why=alike.match.why)
        if steps.limit is not None:
            return Understanding(kind="refuse", response=steps.limit.said, why="past a limit")
        return self._refusal(stripped, steps.missed, self._addressed(words))

    def _refusal(
        self, request: list[str], missed: tuple[str, ...] | None, addressed: list[str]
    ) -> Understanding:
        """A refusal naming what was asked — the part not understood, when only a part was
        ("wave and fly" → "I can't fly") — or "didn't catch that" when the words do not ask
        for anything, or when every word is one the robot knows ("turn": it can, not so).
        ``addressed``: the words as said to the robot, its way of asking kept ("could you
        iron my shirt" asks, whatever the verb)."""
        part = self._matcher.strip(list(missed)) if missed is not None else request
        lacks = self._lacks
        asks_part = part != request and is_request(part, lacks)
        what = part if asks_part else request
        asks = asks_part or is_request(request, lacks) or is_request(addressed, lacks)
        if asks and self._matcher.unknown(part):
            return Understanding(
                kind="refuse",
                response=refusal(what, self.registry),
                why=f"no action for {' '.join(what)!r}",
            )
        return self._not_understood(f"nothing matches {' '.join(request)[:80]!r}", request)

    def _lacks(self, word: str) -> bool:
        """Whether no action of this robot answers to ``word`` ("wave" on Reachy Mini)."""
        return bool(self._matcher.unknown([word]))

    def _not_understood(self, why: str, heard: list[str] | None = None) -> Understanding:
        """What was not understood (quoted back when short) and what the robot can do."""
        return _not_understood(why, heard, self._can)

    def _addressed(self, words: list[str]) -> list[str]:
        """The words after "hey robot", the robot's name, "ok", "so"."""
        own = {*tokens(self.about.wake_phrase), *tokens(self.about.name), *_OPENERS}
        i = 0
        while i < len(words) - 1 and words[i] in own:
            i += 1
        return words[i:]


_OPENERS = frozenset({"hey", "robot", "ok", "okay", "so", "and", "well", "oh", "now"})
_CACHE: dict[tuple[int, ...], tuple[tuple[Action, ...], About, Understander]] = {}
_CACHE_SIZE = 8


def understand(
    text: str,
    registry: ActionRegistry,
    *,
    about: About | None = None,
    previous: Sequence[str] = (),
) -> Understanding:
    """``text`` understood against ``registry`` (interface item 5 of issue 13).

    The compiled registry is cached on its actions' identities (actions are immutable; adding
    or narrowing one makes a new object), so calling this per request stays fast."""
    about = about or About()
    acts = tuple(registry)
    key = tuple(id(a) for a in acts)
    hit = _CACHE.get(key)
    if hit is None or hit[1] != about:
        if len(_CACHE) >= _CACHE_SIZE:
            _CACHE.pop(next(iter(_CACHE)))
        hit = (acts, about, Understander(registry, about=about))  # acts keep the ids alive
        _CACHE[key] = hit
    return hit[2].understand(text, previous=previous)


__all__ = [
    "NOT_UNDERSTOOD",
    "About",
    "Alias",
    "Kind",
    "Understander",
    "Understanding",
    "aliases",
    "asr_phrases",
    "choice_aliases",
    "prompt_phrases",
    "understand",
]
