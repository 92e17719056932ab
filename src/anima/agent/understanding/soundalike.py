"""A command as ASR misheard it: "take a blow" → "take a bow", "give me an ad" → "give me a
nod", "interuse yourself" → "introduce yourself".

Whisper writes what it heard as English words, so a mishearing lands on another word, or cuts
the same sounds into other words ("a nod" → "an ad"). The words are compared with the spaces
taken out, letter by letter (rapidfuzz's ratio), against the registry's own phrases of two
words or more — never against open English — and a phrase is taken only when:

- it is close (:data:`SOUND_SCORE`; "give me a hug" is 70 against "give me a nod": refused),
  and a short command differs by one letter at most ("give me a hand" is refused);
- the rest of the sentence supports it: a content word of the phrase is heard exactly ("take",
  "give", "yourself", "camera"), so one word alone is never guessed ("bowl" is not "bow");
- no other call comes as close (:data:`SOUND_MARGIN`), and nothing in the words turns the
  request around ("don't", "never").

The understander asks this only when nothing understands the request as heard, so an exact
reading always wins; the lexicon's :data:`~.lexicon.SYNONYMS` handle single words.
"""

from __future__ import annotations

from dataclasses import dataclass

from rapidfuzz import fuzz, process
from rapidfuzz.distance import Levenshtein

from anima.agent.actions import Action, ActionRegistry
from anima.agent.phrases import Phrase
from anima.agent.understanding.lexicon import EXTRA_PHRASES, NEGATIONS
from anima.agent.understanding.words import tokens, wordset

SOUND_SCORE = 84.0  # letters in common, spaces out: about one letter in six wrong
SOUND_MARGIN = 4.0  # another call this close makes it a guess between two: not taken
MIN_LETTERS = 6  # shorter commands are too easily another word altogether
# below this many letters one letter may differ, no more ("give me a hand" is not "a nod");
# a longer command is told apart by the many letters it has in common with the phrase
LONG_LETTERS = 14
# words that say nothing about which phrase it is: they do not support a sound-alike
_FRAME = wordset("a an the to at of me my you your us for and it on in")
_ASKING = (("give", "me", "a"), ("give", "us", "a"), ("do", "a"))


@dataclass(frozen=True)
class SoundAlike:
    call: str  # the phrase's canonical plan string
    phrase: str  # the phrase, as the registry words it
    score: float


class SoundAlikes:
    """The registry's fixed phrases (two words or more), by their letters."""

    def __init__(self, registry: ActionRegistry) -> None:
        self._phrases: dict[str, tuple[str, frozenset[str], str]] = {}  # letters → (call, …)
        for act in registry:
            for ph in (*act.phrases, *EXTRA_PHRASES.get(act.name, ())):
                self._add(act, ph)

    def _add(self, act: Action, ph: Phrase) -> None:
        words = tokens(ph.text)
        if ph.slots or not words or not {*ph.args} <= {p.name for p in act.params}:
            return
        try:
            call = act.call_text(act.check_args(ph.args))
        except ValueError:
            return
        # a one-word gesture as people ask for it ("give me a nod"), which the senses
        # understand word by word: heard as "give me an ad", only its letters are left
        for said in [words] if len(words) > 1 else [[*f, *words] for f in _ASKING]:
            text = " ".join(said)
            self._phrases.setdefault("".join(said), (call, frozenset(said) - _FRAME, text))

    def find(self, words: list[str]) -> SoundAlike | None:
        """The phrase ``words`` most likely are, as misheard; None unless it is clear."""
        letters = "".join(words)
        if len(letters) < MIN_LETTERS or NEGATIONS & set(words) or not self._phrases:
            return None
        found = process.extract(
            letters, list(self._phrases), scorer=fuzz.ratio, score_cutoff=SOUND_SCORE, limit=5
        )
        heard = set(words)
        near = [
            (self._phrases[f[0]], float(f[1]))
            for f in found
            if self._phrases[f[0]][1] & heard
            and (len(letters) >= LONG_LETTERS or Levenshtein.distance(letters, f[0]) <= 1)
        ]
        if not near:
            return None
        (call, _, text), score = near[0]
        if any(other[0] != call and s > score - SOUND_MARGIN for other, s in near[1:]):
            return None
        return SoundAlike(call=call, phrase=text, score=score)
