"""One command → its plan strings: "nod twice" → ``play_animation(name='nod')`` ×2.

A clause is tried three ways, the most literal first:

1. a phrase of the registry, word for word, once politeness is stripped ("please say hello");
2. a phrase with a free-text or number slot, as a pattern ("say {text}", "wait {seconds}
   seconds");
3. by its words: the modifiers ("twice", "for two seconds", "a bit") are read out, and the rest
   must contain every word of one :class:`~.senses.Sense` and nothing else but harmless words
   (:data:`~.lexicon.EXTRAS`). The sense with the most words wins; two different calls tied is
   ambiguous, and ambiguous is not understood.

A clause understood but beyond what the action allows ("walk for an hour", "nod 40 times") is a
:class:`Limit`, which the robot says instead of acting.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from rapidfuzz import fuzz, process
from rapidfuzz.distance import Levenshtein

from anima.agent.actions import Action, ActionRegistry
from anima.agent.params import Param, Value
from anima.agent.phrases import Phrase
from anima.agent.understanding import modifiers
from anima.agent.understanding.apply import MAX_REPEAT, ClauseResult, Limit, Match, apply
from anima.agent.understanding.cleaning import for_someone, misheard_nod, unconditional
from anima.agent.understanding.lexicon import (
    COURTESIES,
    EXTRA_PHRASES,
    EXTRAS,
    LEADING,
    SYNONYMS,
    TRAILING,
)
from anima.agent.understanding.senses import senses
from anima.agent.understanding.soundalike import SoundAlikes
from anima.agent.understanding.words import NUMBER_PATTERN, number_at, stem, tokens, unstutter

FUZZY_MIN_LEN = 5  # shorter words are too easily another word ("bowl" is not "bow")
FUZZY_SCORE = 88  # rapidfuzz ratio: a letter wrong in a long word, not a different word


@dataclass(frozen=True)
class _Pattern:
    action: Action
    phrase: Phrase
    regex: re.Pattern[str]


class Matcher:
    """The registry's phrases and senses, compiled once; :meth:`clause` matches one command."""

    def __init__(self, registry: ActionRegistry, *, ignored: tuple[str, ...] = ()) -> None:
        self._literal: dict[str, tuple[Action, Phrase]] = {}
        self._patterns: list[_Pattern] = []
        for act in registry:
            for ph in (*act.phrases, *_fitting(act, EXTRA_PHRASES.get(act.name, ()))):
                if ph.slots:
                    self._patterns.append(_Pattern(act, ph, _compile(act, ph)))
                else:
                    self._literal.setdefault(" ".join(tokens(ph.text)), (act, ph))
        # the most literal words first: "walk forward {seconds} seconds" before "say {text}"
        self._patterns.sort(key=lambda p: -len(_SLOT.sub("", p.phrase.text).split()))
        self._senses = senses(registry)
        self._sounds = SoundAlikes(registry)
        self._seen: dict[tuple[tuple[str, ...], bool], ClauseResult] = {}
        # the words a command begins with: free text ("say {text}") stops before one that
        # follows "and"/"then" ("say hi and give me a nod" is two requests, not one sentence)
        self._starts = frozenset(
            w
            for w in (
                *(k.split()[0] for k in self._literal),
                *(_first_word(p) for p in self._patterns),
                *_STARTS,
            )
            if w and w not in _NOT_STARTS
        )
        # the verbs among them, and the words read as one ("peek": look); not those of free
        # text: "save alone" is no "say alone"
        said = {_first_word(p) for p in self._patterns if _is_free_text_phrase(p)}
        self._verbs = sorted((self._starts | set(SYNONYMS)) - EXTRAS_WORDS - said)
        self._vocabulary = sorted({k for s in self._senses for k in s.keys})
        self._extras = frozenset(stem(w) for w in EXTRAS)
        lead = [*(" ".join(tokens(w)) for w in ignored if w.strip()), *LEADING]
        self._leading = sorted({tuple(w.split()) for w in lead if w}, key=len, reverse=True)
        trail = [*(" ".join(tokens(w)) for w in ignored if w.strip()), *TRAILING]
        self._trailing = sorted({tuple(w.split()) for w in trail if w}, key=len, reverse=True)

    def strip(self, toks: list[str], *, trailing: bool = True) -> list[str]:
        """Politeness, the wake phrase and the robot's name off both ends of a command."""
        trails = self._trailing if trailing else []
        changed = True
        while changed and toks:
            changed = False
            for lead in self._leading:
                if tuple(toks[: len(lead)]) == lead:
                    toks, changed = toks[len(lead) :], True
            for trail in trails:
                if len(toks) > len(trail) and tuple(toks[-len(trail) :]) == trail:
                    toks, changed = toks[: -len(trail)], True
        return toks

    def clause(self, toks: list[str], *, sounds: bool = False) -> ClauseResult:
        """One command's plan strings (a :class:`Match`), a :class:`Limit`, or None;
        ``sounds``: a phrase it sounds like is taken too (:mod:`.soundalike`)."""
        # a request's steps try the same words again and again (each cut, each pass): the
        # answer depends on the words alone, so it is kept (bounded: cleared when full)
        key = (tuple(toks), sounds)
        if key not in self._seen:
            if len(self._seen) >= _CACHE_SIZE:
                self._seen.clear()
            self._seen[key] = self._clause_of(toks, sounds)
        return self._seen[key]

    def _clause_of(self, toks: list[str], sounds: bool) -> ClauseResult:
        if sounds:  # as heard first (kept from the first pass), then as misheard
            found = self.clause(toks)
            kept = self.strip(unconditional(unstutter(toks)))
            if found is None and kept:
                alike = self._sounds.find(kept)
                if alike is not None:
                    return Match((alike.call,), f"sounds like {alike.phrase!r} ({alike.score:.0f})")
            if found is None and len(kept) >= 2:
                found = self._misheard_verb(kept)
            return found
        said = self.strip(toks, trailing=False)  # as heard, for free text ("say bye bye")
        if said[-1:] == ["please"]:  # but "say my name is anima" keeps the robot's name
            said = said[:-1]
        plain = unconditional(unstutter(toks))
        toks = self.strip(plain)
        found = self._clause(toks, said)
        if found is None and toks and misheard_nod(self.strip(plain, trailing=False)):
            found = self._clause(["nod", *toks[1:]])  # "can you not please": ASR's "nod"
        if for_someone(toks) < len(toks):  # "wave to the audience"
            found = _seen(found or self._clause(toks[: for_someone(toks)]))
        for courtesy in COURTESIES:  # "that's enough thanks"; but "say thank you" says it
            if found is None and len(toks) > len(courtesy) and toks[-len(courtesy) :] == courtesy:
                found = self._clause(self.strip(toks[: -len(courtesy)]))
        return found

    def _misheard_verb(self, toks: list[str]) -> ClauseResult:
        """ "work forward for two seconds" → walk: the first word heard as another of the same
        first letter and a letter or two apart, when the rest, as heard, makes a command with
        exactly one of the verbs it could be (one word alone is never re-read)."""
        first, rest = toks[0], toks[1:]
        if (
            first in self._verbs
            or first in EXTRAS_WORDS
            or self._known(stem(first)) in ({*self._vocabulary, *self._extras})
        ):
            return None  # a word the robot knows is meant as said ("wave to second", "give")
        most = 1 if len(first) <= 3 else 2
        found: dict[tuple[str, ...], Match] = {}
        for verb in self._verbs:
            if verb[0] != first[0] or verb == first or Levenshtein.distance(verb, first) > most:
                continue
            match = _seen(self._clause([verb, *rest]))  # a stop is never guessed at
            if isinstance(match, Match):
                found.setdefault(
                    match.actions,
                    Match(match.actions, f"{first!r} heard for {verb!r}: {match.why}"),
                )
        return next(iter(found.values())) if len(found) == 1 else None

    def _clause(self, toks: list[str], said: list[str] | None = None) -> ClauseResult:
        """``toks`` matched; ``said``: the same words with their stutters, for free text."""
        if not toks:
            return None
        text = " ".join(toks)
        hit = self._literal.get(text)
        if hit is not None:
            act, ph = hit
            return Match((act.call_text(act.check_args(ph.args)),), f"phrase {ph.text!r}")
        heard_text = " ".join(said) if said is not None else text
        for pat in self._patterns:
            m = pat.regex.fullmatch(heard_text) or pat.regex.fullmatch(text)
            if m is None:
                continue
            values: dict[str, object] = dict(pat.phrase.args)
            count = 1
            try:
                for slot in pat.phrase.slots:
                    heard = m.group(slot)
                    if _is_free_text(pat.action.param(slot)):  # "say hello twice"
                        if self._swallows(heard.split()):
                            raise ValueError("another request follows")
                        count, words = modifiers.trailing_count(heard.split())
                        heard = " ".join(words)
                    values[slot] = _slot_value(pat.action.param(slot), heard)
                call = pat.action.call_text(pat.action.check_args(values))
            except ValueError:
                continue
            if count > MAX_REPEAT:
                return Limit(f"Sorry, I can't do that more than {MAX_REPEAT} times in a row.")
            why = f"pattern {pat.phrase.text!r}" + (f" ×{count}" if count > 1 else "")
            return Match((call,) * count, why)
        return self._by_words(toks)

    def _by_words(self, toks: list[str]) -> ClauseResult:
        read = modifiers.read(toks)
        if read is None:
            return None
        mods, rest = read
        # sound-alikes and synonyms only here: free text ("say {text}") is said as heard
        content = frozenset(self._known(stem(SYNONYMS.get(t, t))) for t in rest)
        if not content:
            return None
        fits = [s for s in self._senses if s.keys <= content and content - s.keys <= self._extras]
        if not fits:
            return None
        most = max(len(s.keys) for s in fits)
        best = [s for s in fits if len(s.keys) == most]
        first = min(s.rank for s in best)
        matches: dict[tuple[str, ...], Match] = {}
        limits: list[Limit] = []
        for sense in (s for s in best if s.rank == first):
            result = apply(sense, mods, heard=rest)
            if isinstance(result, Match):
                matches.setdefault(result.actions, result)
            elif isinstance(result, Limit):
                limits.append(result)
        if len(matches) == 1:
            return next(iter(matches.values()))
        if not matches and limits:
            return limits[0]
        return None  # nothing fits the modifiers, or two different calls: ambiguous

    def _swallows(self, words: list[str]) -> bool:
        """Free text that goes on into another command: "hi and give me a nod"."""
        return any(
            words[i] in _JOINS and words[i + 1] in self._starts for i in range(len(words) - 1)
        )

    def unknown(self, words: list[str]) -> list[str]:
        """The words that neither name an action nor may surround one ("coffee" in "make me
        a coffee"): a request with none of them is not understood rather than refused — the
        robot knows every word, so it can likely do it, but not as said ("turn")."""
        read = modifiers.read(words)
        rest = read[1] if read is not None else words
        vocabulary = set(self._vocabulary)
        return [w for w in rest if self._known(stem(w)) not in vocabulary | self._extras]

    def _known(self, word: str) -> str:
        """A word as the vocabulary has it, a misheard letter corrected in long words."""
        if word in self._extras or len(word) < FUZZY_MIN_LEN or not self._vocabulary:
            return word
        if word in self._vocabulary:
            return word
        found = process.extractOne(
            word, self._vocabulary, scorer=fuzz.ratio, score_cutoff=FUZZY_SCORE
        )
        return word if found is None else str(found[0])


_SLOT = re.compile(r"\{[A-Za-z_][A-Za-z0-9_]*\}")
_CACHE_SIZE = 4096  # clauses kept: a request of MAX_WORDS words tries at most ~1,800
_JOINS = frozenset({"and", "then", "than"})
EXTRAS_WORDS = frozenset(EXTRAS) | {"thank", "tell", "be", "put", "end", "head", "eyes"}
_STARTS = ("give", "let", "try", "can", "could", "please")  # how requests begin, besides verbs
# first words of phrases that begin sentences of any kind ("i", "it"): no command follows them
_NOT_STARTS = frozenset({"i", "it", "you", "we", "the", "a", "an", "that", "this"})
# a pause or a stop is for no one: "could you wait at me" is a misheard "wave at me"
_UNSEEN = frozenset({"wait", "stop", "finish", "stop_walking"})


def _seen(found: ClauseResult) -> ClauseResult:
    """``found`` unless it is only pauses or stops (which have no audience)."""
    if isinstance(found, Match) and all(a.split("(", 1)[0] in _UNSEEN for a in found.actions):
        return None
    return found


def _is_free_text_phrase(pattern: _Pattern) -> bool:
    return any(_is_free_text(pattern.action.param(slot)) for slot in pattern.phrase.slots)


def _first_word(pattern: _Pattern) -> str:
    first = pattern.phrase.text.split()[0]
    return "" if _SLOT.fullmatch(first) else " ".join(tokens(first)[:1])


def _fitting(act: Action, phrases: tuple[Phrase, ...]) -> list[Phrase]:
    """The extra phrases that fit ``act`` as this registry has it: its parameters, and values
    it accepts ("point" → point_right is no phrase on a body without point_right)."""
    names = {p.name for p in act.params}
    out = []
    for ph in phrases:
        if not {*ph.slots, *ph.args} <= names:
            continue
        if not ph.slots:
            try:
                act.check_args(ph.args)
            except ValueError:
                continue
        out.append(ph)
    return out


def _compile(act: Action, phrase: Phrase) -> re.Pattern[str]:
    out: list[str] = []
    for word in phrase.text.split():
        if _SLOT.fullmatch(word) is None:
            out.extend(re.escape(w) for w in tokens(word))
            continue
        name = word[1:-1]
        out.append(f"(?P<{name}>{_slot_pattern(act.param(name))})")
    return re.compile(r"\s+".join(out))


def _is_free_text(param: Param) -> bool:
    return param.kind is str and param.choices is None


def _slot_pattern(param: Param) -> str:
    if param.choices is not None:
        spoken = sorted((re.escape(_spoken(c)) for c in param.choices), key=len, reverse=True)
        return "|".join(spoken)
    if param.kind in (int, float):
        return NUMBER_PATTERN
    return r".+"


def _spoken(value: object) -> str:
    """A choice as it is heard: ``point_right`` → ``point right``."""
    return " ".join(tokens(str(value).replace("_", " ")))


def _slot_value(param: Param, heard: str) -> Value:
    if param.choices is not None:
        for choice in param.choices:
            if _spoken(choice) == heard:
                return choice
        raise ValueError(f"{heard!r} is not a choice")
    if param.kind in (int, float):
        found = number_at(heard.split(), 0)
        if found is None or found[1] != len(heard.split()):
            raise ValueError(f"{heard!r} is not a number")
        number = found[0]
        return int(number) if param.kind is int and number.is_integer() else number
    return heard
