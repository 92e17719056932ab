"""Does the text heard so far promise more words?

A request that ends on "and", "then", "the", "to", "um"… is not over, whatever the voice does:
the speaker is looking for the next word. The test is on the **last word** of the ASR's partial
(and for "could you", "give me" on the last two), so it is cheap, explainable and does not need
the text to be a known command; anything else counts as a complete request.
"""

from __future__ import annotations

import re
from enum import Enum

# Words after which a request cannot end, by kind. A word here costs only a longer wait in a
# pause after it; a word missing, a turn cut after it when the voice also falls.
OPEN_WORDS = {
    "conjunction": "and or but then so also plus after before until while because if when",
    "determiner": "the a an some any this these those another every each no",
    "preposition": "to of for with at in on into onto from by about toward over under through",
    "possessive": "my your his her its our their",
    "hesitation": "um uh er erm hmm ah eh well like",
    "auxiliary": "is are am was be can could would will should shall may might must",
    "unfinished": "let let's lets very really more most just",
}
OPEN_ENDINGS = frozenset(word for kind in OPEN_WORDS.values() for word in kind.split())
# Two-word endings whose last word alone is often final ("wave at me", "thank you"): only these
# pairs are open
OPEN_PAIRS = frozenset(
    {
        ("could", "you"), ("can", "you"), ("would", "you"), ("will", "you"),
        ("give", "me"), ("show", "me"), ("tell", "me"), ("help", "me"), ("let", "me"),
        ("i", "want"), ("i'd", "like"), ("want", "you"), ("like", "you"), ("i", "need"),
        ("you", "to"), ("and", "now"), ("turn", "your"), ("how", "about"),
    }
)  # fmt: skip
# A question may leave a preposition or "like" at its end ("where are you from", "what's the
# weather like", "what is it for"): after a wh-word such an ending may be the last word
STRANDABLE = frozenset({*OPEN_WORDS["preposition"].split(), "like"})
WH_WORDS = frozenset(
    {"what", "what's", "whats", "where", "where's", "who", "who's", "whom", "which", "how", "how's"}
)
_WORD = re.compile(r"[a-z0-9']+")
_SENTENCE_END = re.compile(r"[.!?]+")
TAIL_CHARS = 80  # only the end of a partial is read: 15 s of speech is ~250 characters


class TextCue(Enum):
    NONE = "none"  # no partial text yet: the text says nothing
    OPEN = "open"  # ends on a word that promises more
    COMPLETE = "complete"  # could be a whole request


def words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def text_cue(text: str | None) -> TextCue:
    """What the partial ``text`` says about the turn (see the module docstring)."""
    text = text or ""
    heard = words(text[-TAIL_CHARS:])
    if len(text) > TAIL_CHARS:
        heard = heard[1:] or heard  # the first word of the tail may be cut in half
    if not heard:
        return TextCue.NONE
    if heard[-1] in OPEN_ENDINGS or tuple(heard[-2:]) in OPEN_PAIRS or heard == ["please"]:
        return TextCue.OPEN
    return TextCue.COMPLETE


def stranded(text: str | None) -> bool:
    """The last sentence of ``text`` is a wh-question ending on a word it may strand: a
    preposition or "like" ("where are you from", "what's the weather like"). Open by
    :func:`text_cue` (it usually promises more: "what's the weather like in | Paris"), such an
    ending may still end the turn: full duplex's early reply, taken back if the person goes on,
    begins after it; the turn's own end still waits for more."""
    sentences = [s for s in _SENTENCE_END.split((text or "")[-TAIL_CHARS:]) if words(s)]
    heard = words(sentences[-1]) if sentences else []
    return len(heard) >= 3 and heard[-1] in STRANDABLE and not WH_WORDS.isdisjoint(heard[:-2])
