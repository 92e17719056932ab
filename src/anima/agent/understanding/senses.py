"""The senses of the registry's actions: which words, heard together, ask for which call.

A :class:`Sense` is an action with some fixed arguments and the set of word stems that must all
be heard for it ("shake your head" → ``play_animation(name='shake')`` needs {shake, head}).
Senses come from, in this order of trust:

1. the actions' phrases (``phrases=`` of ``@action``, and :data:`~.lexicon.EXTRA_PHRASES`);
2. each choice of a parameter, by its words (``LOOKUP_Waving`` → {wave}), so an animation the
   library has but no phrase names can still be asked for;
3. an action callable without arguments, by its name's words (``walk_forward`` → {walk,
   forward}), so a user's own action is understood from its name alone;
4. an action without parameters, by the first clause of its docstring when that is short
   ("Welcome a visitor with a bow." → {welcome, visitor}).

Words that say nothing about the action ("a", "the", "your", "to") are not part of a sense.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from anima.agent.actions import Action, ActionRegistry
from anima.agent.params import Param, Scalar, Value
from anima.agent.phrases import Phrase
from anima.agent.understanding.lexicon import (
    EXTRA_PHRASES,
    EXTRAS,
    GENERIC_NAME_WORDS,
    NAME_NOISE,
)
from anima.agent.understanding.modifiers import UNITS
from anima.agent.understanding.words import stem, tokens

_OPTIONAL = frozenset({"a", "an", "the", "your", "my", "to"})
_SLOT = re.compile(r"\{[A-Za-z_][A-Za-z0-9_]*\}")
_CAMEL = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")
DURATION_PARAMS = ("seconds", "duration", "duration_s", "secs")
MAX_DOC_WORDS = 3  # a docstring's first clause names the action only when it is this short
# where a docstring's first clause ends: "Walk forward for a while, then stand still"
_DOC_CLAUSE = re.compile(r"[,.;:(]| (?:and|or|for|while|then|until|when|with|from|so|to) ")


@dataclass(frozen=True)
class Sense:
    action: Action
    args: Mapping[str, Value]  # fixed by the phrase or the choice
    keys: frozenset[str]  # stems that must all be heard
    source: str  # where it comes from, for explanations: "phrase 'wave hello'"
    rank: int  # 0 phrase, 1 choice, 2 name, 3 docstring: the more deliberate wins a tie
    said: str  # its words as a person says them: "walk forward"


def phrase_keys(text: str) -> frozenset[str]:
    """The stems a phrase needs heard: its words without slots, units and "a/the/your"."""
    words = tokens(_SLOT.sub(" ", text))
    return frozenset(stem(w) for w in words if w not in _OPTIONAL and w not in UNITS)


def name_words(name: str) -> list[str]:
    """``LOOKUP_Waving`` → ["waving"], ``Posture_LookAtZoom`` → ["look", "at", "zoom"]."""
    words = [w.lower() for part in re.split(r"[_\s\-']+", name) for w in _CAMEL.findall(part)]
    return [w for w in words if w not in NAME_NOISE]


def senses(registry: ActionRegistry) -> list[Sense]:
    """Every sense of every action in the registry (see the module's docstring)."""
    out: list[Sense] = []
    for act in registry:
        out.extend(_phrase_senses(act, [*act.phrases, *EXTRA_PHRASES.get(act.name, ())]))
        out.extend(_choice_senses(act))
        if all(not p.required for p in act.params):
            keys = frozenset(stem(w) for w in name_words(act.name)) - _generic()
            if keys:
                words = " ".join(name_words(act.name))
                out.append(Sense(act, {}, keys, f"name {act.name!r}", 2, words))
            # only without parameters: a docstring tells the deed, not what its defaults do
            said = doc_words(act.summary) if not act.params else []
            keys = frozenset(stem(w) for w in said)
            if 0 < len(keys) <= MAX_DOC_WORDS:
                out.append(Sense(act, {}, keys, f"docstring {' '.join(said)!r}", 3, " ".join(said)))
    return out


def doc_words(summary: str) -> list[str]:
    """The words of a docstring's first clause that name the deed: "Welcome a visitor with a
    bow." → ["welcome", "visitor"]; [] when the clause is long (a description, not a name)."""
    clause = _DOC_CLAUSE.split(summary, maxsplit=1)[0]
    words = [w for w in tokens(clause) if w not in EXTRAS and w not in _OPTIONAL]
    return words if len(words) <= MAX_DOC_WORDS else []


def _generic() -> frozenset[str]:
    return frozenset(stem(w) for w in GENERIC_NAME_WORDS)


def _phrase_senses(act: Action, phrases: Iterable[Phrase]) -> Iterable[Sense]:
    for ph in phrases:
        if any(_is_text(act.param(s)) for s in ph.slots if _has(act, s)):
            continue  # free text ("say {text}") is matched by its pattern, not by words
        if any(not _has(act, s) for s in ph.slots) or any(not _has(act, k) for k in ph.args):
            continue  # an extra phrase that does not fit this registry's action
        try:
            act.check_args(_probe(act, ph))
        except ValueError:
            continue  # e.g. an animation this library does not have
        keys = phrase_keys(ph.text)
        if keys:
            said = [w for w in _SLOT.sub("", ph.text).split() if w not in UNITS]
            yield Sense(act, dict(ph.args), keys, f"phrase {ph.text!r}", 0, " ".join(said))


def _choice_senses(act: Action) -> Iterable[Sense]:
    base = frozenset(stem(w) for w in name_words(act.name)) - _generic()
    for p in act.params:
        if p.choices is None or any(q.required for q in act.params if q is not p):
            continue
        for choice in p.choices:
            said = name_words(str(choice))
            words = frozenset(stem(w) for w in said)
            if words:
                source = f"choice {choice!r}"
                yield Sense(act, {p.name: choice}, base | words, source, 1, " ".join(said))


def duration_param(act: Action) -> Param | None:
    """The parameter that says how long (``seconds``), when the action has one."""
    for p in act.params:
        if p.name in DURATION_PARAMS and p.kind in (int, float):
            return p
    return None


def _has(act: Action, name: str) -> bool:
    return any(p.name == name for p in act.params)


def _is_text(p: Param) -> bool:
    return p.kind is str and p.choices is None


def _probe(act: Action, ph: Phrase) -> dict[str, object]:
    probe: dict[str, object] = dict(ph.args)
    for slot in ph.slots:
        p = act.param(slot)
        stand_in: Scalar = p.choices[0] if p.choices else p.kind(1)
        if p.bounds is not None and p.kind in (int, float):
            stand_in = p.kind(p.bounds[0])
        probe[slot] = stand_in
    return probe
