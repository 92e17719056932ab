"""Which of the recognizer's readings to act on: the best one, unless it reads as nothing.

Whisper's beam gives other readings of the same sound besides its best
(:attr:`~anima.events.Transcript.alternatives`, within ``ALT_MARGIN`` of the best). When the best
reading is understood — an action, an answer, or a refusal of something the robot cannot do —
it is the one acted on, whatever the others say. Only when it is **not understood** ("Look over
to your light.") is the first other reading that is understood as an action or an answer taken
("Look over to your right."), and only if it sounds like the best one (:func:`sounds_alike`):
an other reading that is a different sentence ("See you later." for "They will die.", both
heard in "the the the") is the beam guessing, not hearing.

Never a refusal from an other reading: a refusal says what was asked, and the words were not
heard as that. Measured on the conversation set's dev split (offline, 101 requests × 4 voices ×
3 rooms, push-to-talk audio, Whisper beam 5): the best reading alone did what was meant in
78.6 % of the 1212 trials; with this rule 83.4 %, the not understood falling from 192 to 123;
wrong actions rose from 25 to 33 (a misheard "peek to the left" read as "Big turn left.").
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from rapidfuzz import fuzz, process

from anima.agent.understanding.result import Understanding
from anima.agent.understanding.words import tokens

# rapidfuzz ratio (0-100) of the two readings' words: above this they are one sound heard two
# ways ("Come your way, mat me." / "Can you wave at me?" 74); the beam's other sentences for a
# mumble scored 38-47
ALIKE_RATIO = 50.0
ACTED = frozenset({"act", "answer"})
HINTS = 4  # command phrases nearest the words heard, put in the prompt to read them again


def sounds_alike(best: str, other: str) -> bool:
    """Whether ``other`` is ``best`` heard another way: their words are close (rapidfuzz ratio
    ≥ :data:`ALIKE_RATIO`), or ``other`` holds every word of ``best`` and more (a decode that
    stopped early: "No" / "No, no, stop.")."""
    a, b = _words(best), _words(other)
    if not a or not b:
        return False
    if set(a) <= set(b):
        return True
    return fuzz.ratio(" ".join(a), " ".join(b)) >= ALIKE_RATIO


def pick_reading(
    best: str, alternatives: Sequence[str], understand: Callable[[str], Understanding]
) -> tuple[str, Understanding]:
    """The reading to act on and its understanding (see the module docstring)."""
    understood = understand(best)
    if understood.kind != "not_understood":
        return best, understood
    return _first_done(best, alternatives, understand, refusal_ends=False) or (best, understood)


def hints(text: str, phrases: Sequence[str], count: int = HINTS) -> list[str]:
    """The ``count`` command phrases nearest ``text``'s words (rapidfuzz token-set ratio, so a
    phrase whose words are all among them scores 100): "Look over to your light." → "look
    left", "look right", "look up", "look down"."""
    words = " ".join(_words(text))
    if not words or not phrases:
        return []
    found = process.extract(words, list(phrases), scorer=fuzz.token_set_ratio, limit=count)
    return [str(match[0]) for match in found]


def reread_reading(
    best: str, again: Sequence[str], understand: Callable[[str], Understanding]
) -> tuple[str, Understanding] | None:
    """Of ``again`` (the utterance read again with :func:`hints` in the prompt), the first
    reading that sounds like ``best`` and is understood as an action or an answer; None when
    there is none, or a refusal comes first (the words were heard as something it can't do).

    Measured after :func:`pick_reading`, offline on the conversation set (the trials of
    docs/listening.md's *Other readings*): dev 84.9 → 86.6 % done as meant (wrong actions 23
    → 28 of 1212), held-out 70.1 → 71.4 % (17 → 20 of 384); a second decode (p50 135 ms, two
    runs sharing the machine) for the 13 % and 20 % of the requests read as nothing."""
    return _first_done(best, again, understand, refusal_ends=True)


def choose_reading(
    text: str,
    alternatives: Sequence[str],
    understand: Callable[[str], Understanding],
    *,
    reread: Callable[[str, Sequence[str]], Sequence[str]] | None = None,
    phrases: Sequence[str] = (),
) -> tuple[str, str]:
    """The reading of a final to act on, and how it was found: ``""`` (as heard), ``"another
    reading"`` (:func:`pick_reading`), ``"read again"`` (``reread(text, hints)``, the
    recognizer's reading again with :func:`hints` from ``phrases``; :func:`reread_reading`)."""
    chosen, understood = pick_reading(text, alternatives, understand)
    how = "another reading" if chosen != text else ""
    if understood.kind != "not_understood" or reread is None or not phrases:
        return chosen, how
    found = reread_reading(text, reread(text, hints(text, phrases)), understand)
    return (found[0], "read again") if found is not None else (chosen, how)


def _first_done(
    best: str,
    readings: Sequence[str],
    understand: Callable[[str], Understanding],
    *,
    refusal_ends: bool,
) -> tuple[str, Understanding] | None:
    """The first of ``readings`` that sounds like ``best`` and is understood as an action or an
    answer (None: none is, or with ``refusal_ends`` a refusal came first)."""
    for text in readings:
        if not sounds_alike(best, text):
            continue
        reading = understand(text)
        if reading.kind in ACTED:
            return text, reading
        if refusal_ends and reading.kind == "refuse":
            return None
    return None


def _words(text: str) -> list[str]:
    return [t for t in tokens(text) if any(c.isalnum() for c in t)]
