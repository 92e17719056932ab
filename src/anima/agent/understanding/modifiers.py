"""How often, how long, how far: the modifiers of a command, read out of its words.

"nod twice", "walk forward for two seconds", "take three steps forward", "turn left 90
degrees", "turn right a little" — :func:`read` takes these words out of a clause and returns
them as a :class:`Modifiers`, leaving the words that name the action. The action's own
parameters decide later what a modifier means (:mod:`~anima.agent.understanding.apply`).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Literal, TypedDict

from anima.agent.understanding.words import number_at


class Amount(StrEnum):
    SMALL = "small"  # "a bit", "a little", "slightly"
    LARGE = "large"  # "a lot", "far"


class Pace(StrEnum):
    SLOW = "slow"  # "slowly", "gently"
    FAST = "fast"  # "quickly", "fast"


@dataclass(frozen=True)
class Modifiers:
    count: int | None = None  # "twice" → 2
    seconds: float | None = None  # "for two seconds"
    steps: float | None = None  # "three steps"
    metres: float | None = None  # "one meter"
    degrees: float | None = None  # "90 degrees"
    amount: Amount | None = None
    pace: Pace | None = None  # for a speed or rate parameter; ignored by an action without
    roughly: bool = False  # the duration was "a second", "a moment": not a measure to keep

    @property
    def measured(self) -> bool:
        """A how-long/how-far modifier is present (it needs a parameter to go to)."""
        return any(v is not None for v in (self.seconds, self.steps, self.metres, self.degrees))


class Found(TypedDict, total=False):
    """What one modifier's words give: :class:`Modifiers`'s fields, those the words named."""

    count: int
    seconds: float
    steps: float
    metres: float
    degrees: float
    amount: Amount
    pace: Pace
    roughly: bool


Measure = Literal["seconds", "steps", "metres", "degrees"]  # what a unit measures
UNITS: dict[str, tuple[Measure, float]] = {
    "second": ("seconds", 1.0),
    "seconds": ("seconds", 1.0),
    "sec": ("seconds", 1.0),
    "secs": ("seconds", 1.0),
    "minute": ("seconds", 60.0),
    "minutes": ("seconds", 60.0),
    "hour": ("seconds", 3600.0),
    "hours": ("seconds", 3600.0),
    "step": ("steps", 1.0),
    "steps": ("steps", 1.0),
    "meter": ("metres", 1.0),
    "meters": ("metres", 1.0),
    "metre": ("metres", 1.0),
    "metres": ("metres", 1.0),
    "m": ("metres", 1.0),
    "foot": ("metres", 0.3048),
    "feet": ("metres", 0.3048),
    "ft": ("metres", 0.3048),
    "degree": ("degrees", 1.0),
    "degrees": ("degrees", 1.0),
}
_TIMES = ("times", "time")
# "to seconds" can only be ASR's "two seconds" (and "wait to second" its "two seconds" too)
_PLURAL_UNITS = frozenset({"seconds", "second", "steps", "meters", "metres"})

# whole word sequences, longest first where one is the start of another
_FIXED_WORDS: tuple[tuple[str, Found], ...] = (
    ("one more time", {"count": 1}),
    ("a couple of times", {"count": 2}),
    ("a couple times", {"count": 2}),
    ("a few times", {"count": 3}),
    ("once", {"count": 1}),
    ("twice", {"count": 2}),
    ("thrice", {"count": 3}),
    ("again", {}),
    ("for a moment", {"seconds": 2.0, "roughly": True}),
    ("a moment", {"seconds": 2.0, "roughly": True}),
    ("for a while", {"amount": Amount.LARGE}),
    ("for a bit", {"amount": Amount.SMALL}),
    ("a couple of steps", {"steps": 2.0}),
    ("a few steps", {"steps": 3.0}),
    ("just a little bit", {"amount": Amount.SMALL}),
    ("just a little", {"amount": Amount.SMALL}),
    ("just a bit", {"amount": Amount.SMALL}),
    ("a little bit", {"amount": Amount.SMALL}),
    ("a tiny bit", {"amount": Amount.SMALL}),
    ("a little", {"amount": Amount.SMALL}),
    ("a bit", {"amount": Amount.SMALL}),
    ("a tad", {"amount": Amount.SMALL}),
    ("slightly", {"amount": Amount.SMALL}),
    ("a lot", {"amount": Amount.LARGE}),
    ("a long way", {"amount": Amount.LARGE}),
    ("far", {"amount": Amount.LARGE}),
    ("slowly", {"pace": Pace.SLOW}),
    ("slow", {"pace": Pace.SLOW}),
    ("gently", {"pace": Pace.SLOW}),
    ("carefully", {"pace": Pace.SLOW}),
    ("quickly", {"pace": Pace.FAST}),
    ("quick", {"pace": Pace.FAST}),
    ("fast", {"pace": Pace.FAST}),
    ("faster", {"pace": Pace.FAST}),
)
_FIXED: tuple[tuple[tuple[str, ...], Found], ...] = tuple(
    (tuple(words.split()), value) for words, value in _FIXED_WORDS
)
_BEFORE_MEASURE = ("for", "by", "about", "around", "roughly")  # "for two seconds", "by 90 degrees"


def read(toks: list[str]) -> tuple[Modifiers, list[str]] | None:
    """The clause's modifiers and its other words; None when a modifier is given twice
    ("nod twice three times") or a count is not a whole number."""
    mods: Found = {}
    rest: list[str] = []
    i = 0
    while i < len(toks):
        found = _measure(toks, i) or _fixed(toks, i) or _how_many(toks, i)
        if found is None:
            rest.append(toks[i])
            i += 1
            continue
        values, used = found
        if values.keys() & mods.keys():
            return None
        mods.update(values)
        i += used
    out = Modifiers(**mods)
    # "for" left dangling before a measure that was read ("walk for, um, two seconds")
    while rest and rest[-1] in _BEFORE_MEASURE and out.measured:
        rest.pop()
    return out, rest


def _how_many(toks: list[str], i: int) -> tuple[Found, int] | None:
    """ "give me two nods": a small whole number before a word that is no unit is a count."""
    num = number_at(toks, i)
    if num is None or i + num[1] >= len(toks):
        return None
    value, used = num
    after = toks[i + used]
    if not value.is_integer() or not 1 <= value <= 10 or after in UNITS or after in _TIMES:
        return None
    if number_at(toks, i + used) is not None or after in _PUNCTUATION:
        return None
    return {"count": int(value)}, used


_PUNCTUATION = frozenset(",;.!?")


def trailing_count(words: list[str]) -> tuple[int, list[str]]:
    """ "hello twice" → (2, ["hello"]): a count at the end of free text ("say hello twice")."""
    for n in (3, 2, 1):
        if len(words) > n:
            found = _fixed(words, len(words) - n) or _measure(words, len(words) - n)
            if found is not None and found[1] == n and set(found[0]) == {"count"}:
                return found[0]["count"], words[:-n]
    return 1, words


def _fixed(toks: list[str], i: int) -> tuple[Found, int] | None:
    for words, value in _FIXED:
        if tuple(toks[i : i + len(words)]) == words:
            return value, len(words)
    return None


def _measure(toks: list[str], i: int) -> tuple[Found, int] | None:
    """ "[for|by|about] NUMBER UNIT" and "NUMBER times"."""
    start = i
    while i < len(toks) and toks[i] in _BEFORE_MEASURE:
        i += 1
    num = _number(toks, i)
    if num is None:
        return None
    value, used = num
    j = i + used
    if j >= len(toks):
        return None
    unit = toks[j]
    if unit in _TIMES and start == i:
        if not value.is_integer() or value < 1:
            return None
        return {"count": int(value)}, j + 1 - start
    if unit in UNITS:
        key, scale = UNITS[unit]
        out: Found = {}
        out[key] = value * scale
        if toks[i] in ("a", "an") and key == "seconds":
            out["roughly"] = True  # "look up for a second": a brief look, not a timed one
        return out, j + 1 - start
    return None


def _number(toks: list[str], i: int) -> tuple[float, int] | None:
    found = number_at(toks, i)
    if found is not None:
        return found
    if i + 1 < len(toks) and toks[i + 1] in UNITS:
        if toks[i] in ("a", "an", "one"):  # "a second", "a meter"
            return (1.0, 1)
        if toks[i] in ("to", "too") and (
            (i > 0 and toks[i - 1] in _BEFORE_MEASURE) or toks[i + 1] in _PLURAL_UNITS
        ):
            return (2.0, 1)  # ASR's "for to seconds", "wait to seconds"
    if i + 1 < len(toks) and toks[i] in ("to", "too") and toks[i + 1] in _TIMES:
        return (2.0, 1)  # "nod to times": nothing else goes to times
    if i + 1 < len(toks) and toks[i] == "free" and (toks[i + 1] in UNITS or toks[i + 1] in _TIMES):
        return (3.0, 1)  # ASR's "for free seconds", "free times": nothing else is free there
    return None
