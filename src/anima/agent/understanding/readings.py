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

from rapidfuzz import fuzz

from anima.agent.understanding.result import Understanding
from anima.agent.understanding.words import tokens

# rapidfuzz ratio (0-100) of the two readings' words: above this they are one sound heard two
# ways ("Come your way, mat me." / "Can you wave at me?" 74); the beam's other sentences for a
# mumble scored 38-47
ALIKE_RATIO = 50.0
ACTED = frozenset({"act", "answer"})


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
    for other in alternatives:
        if not sounds_alike(best, other):
            continue
        reading = understand(other)
        if reading.kind in ACTED:
            return other, reading
    return best, understood


def _words(text: str) -> list[str]:
    return [t for t in tokens(text) if any(c.isalnum() for c in t)]
