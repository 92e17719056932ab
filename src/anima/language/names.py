"""Animation names as people write them: any case, friendly aliases, and "did you mean".

The library's names are its files' ``<animation_name>`` s (``LOOKUP_Waving``, ``nod``), and
events always carry those. A name given at any door is resolved once, by the library
(:meth:`~anima.animation.library.AnimationLibrary.resolve`, which ``get`` uses), in order:

1. the name itself;
2. the name in any case, with any separators: ``lookup_waving``, ``Lookup Waving``,
   ``LOOKUP-WAVING`` (letters and digits compared, lower-cased);
3. a friendly alias the library has the animation for: :data:`ALIASES` (the names the agent
   understands: its friendly choice names and the lexicon's extra phrases — ``wave``,
   ``shake your head``, ``handshake`` — and their ``-ing`` forms), then the name's own words
   without the naming conventions (``waving`` for ``LOOKUP_Waving``, ``look at interviewer``).

A real name always wins over an alias, and an alias two animations could claim is given to
neither. An unknown name is refused with the closest names and aliases (:meth:`Names.refusal`).
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Mapping

# friendly name → the animations it may stand for, the first the library has wins (a body's
# own set: "happy" is Nadine's smile and Reachy Mini's happy_antennas)
ALIASES: Mapping[str, tuple[str, ...]] = {
    # Nadine's shipped set (the agent's choice names and phrases: anima.agent.builtins)
    "wave": ("LOOKUP_Waving",),
    "waving": ("LOOKUP_Waving",),
    "wave hello": ("LOOKUP_Waving",),
    "wave goodbye": ("LOOKUP_Waving",),
    "nodding": ("nod",),
    "nod your head": ("nod",),
    "shake your head": ("shake",),
    "shake head": ("shake",),
    "head shake": ("shake",),
    "shaking": ("shake",),
    "shake hands": ("shakehand_TwoArgGesture",),
    "shake hand": ("shakehand_TwoArgGesture",),
    "shake my hand": ("shakehand_TwoArgGesture",),
    "handshake": ("shakehand_TwoArgGesture",),
    "bowing": ("bow",),
    "take a bow": ("bow",),
    "smiling": ("smile",),
    "grin": ("smile",),
    "happy": ("smile", "happy_antennas"),
    "surprised": ("surprise",),
    "look surprised": ("surprise",),
    "thinking": ("think",),
    "point": ("point_right",),
    "pointing": ("point_right",),
    "point right": ("point_right",),
    "blinking": ("blink",),
    "breathing": ("breathingSlow",),
    "look at me": ("Posture_LookAtInterviewer",),
    "interviewer": ("Posture_LookAtInterviewer",),
    "look at the camera": ("Posture_LookAtZoom",),
    "camera": ("Posture_LookAtZoom",),
    "look ahead": ("LOOKUPPostureDefault",),
    "default posture": ("LOOKUPPostureDefault",),
    # Reachy Mini's starter set
    "sleep": ("go_to_sleep",),
    "wake": ("wake_up",),
    "antennas": ("happy_antennas",),
    "sadness": ("sad",),
}
# words of a name that are naming conventions, not meaning (as the agent's lexicon has them)
NAME_NOISE = frozenset({"lookup", "posture", "two", "arg", "gesture", "anim", "animation"})
SUGGESTED = 3  # close names a refusal offers
LISTED = 6  # names a refusal lists when none is close
_NOT_KEY = re.compile(r"[^0-9a-z]+")
_CAMEL = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")


def key(text: str) -> str:
    """What two spellings of one name share: its letters and digits, lower-cased
    (``LOOKUP_Waving``, ``lookup waving`` and ``LookupWaving`` → ``lookupwaving``)."""
    return _NOT_KEY.sub("", text.lower())


def words(name: str) -> list[str]:
    """A name's words, lower-cased: ``Posture_LookAtZoom`` → posture, look, at, zoom."""
    return [w.lower() for part in re.split(r"[^0-9A-Za-z]+", name) for w in _CAMEL.findall(part)]


class Names:
    """One library's names and every spelling and alias that stands for one of them."""

    def __init__(self, names: Iterable[str]) -> None:
        self.names = tuple(sorted(set(names)))
        self._exact = frozenset(self.names)
        table: dict[str, str] = {}  # key → name
        for level in (self._spellings(), self._declared(), self._derived()):
            for k, name in level.items():
                table.setdefault(k, name)  # an earlier level (a real name) wins
        self._table = table
        self._aliases = {
            alias: name
            for alias, name in ((a, table.get(key(a))) for a in self._alias_texts())
            if name is not None
        }

    def _spellings(self) -> dict[str, str]:
        return _unique((key(n), n) for n in self.names)

    def _declared(self) -> dict[str, str]:
        out: dict[str, str] = {}
        for alias, targets in ALIASES.items():
            found = next((t for t in targets if t in self._exact), None)
            if found is not None:
                out.setdefault(key(alias), found)
        return out

    def _derived(self) -> dict[str, str]:
        return _unique(
            (key("".join(w for w in words(n) if w not in NAME_NOISE)), n) for n in self.names
        )

    def _alias_texts(self) -> list[str]:
        derived = [" ".join(w for w in words(n) if w not in NAME_NOISE) for n in self.names]
        return [*ALIASES, *derived]

    def resolve(self, given: str) -> str | None:
        """The library's name for ``given`` (itself, another spelling, an alias), or None."""
        if given in self._exact:
            return given
        found = self._table.get(key(given))
        return found if found else None

    def aliases(self) -> dict[str, str]:
        """Friendly name → the library's name, for the names this library has (listings)."""
        return {a: n for a, n in self._aliases.items() if key(a) != key(n)}

    def suggestions(self, given: str, n: int = SUGGESTED) -> list[str]:
        """The library's names closest to ``given``, by its own spelling and by its aliases'."""
        close = difflib.get_close_matches(given, self.names, n=n)
        by_key = difflib.get_close_matches(key(given), list(self._table), n=n)
        out = list(dict.fromkeys([*close, *(self._table[k] for k in by_key)]))
        return out[:n]

    def hint(self, given: str) -> str | None:
        """What to tell of an unknown ``given``: ``did you mean LOOKUP_Waving?``, or for a
        gesture of another body's set (``wave`` on Reachy Mini) that this library has none
        (not a look-alike: ``wake_up``); None when nothing is close."""
        elsewhere = _OTHER_BODIES.get(key(given))
        if elsewhere:
            return f"this robot's library has no {elsewhere}"
        close = self.suggestions(given)
        return f"did you mean {', '.join(close)}?" if close else None

    def refusal(self, given: str) -> str:
        """``unknown animation 'wav' (did you mean LOOKUP_Waving?)``; a gesture of another
        body's set is said to be missing here; with nothing close, the shortest names and how
        many there are."""
        elsewhere = _OTHER_BODIES.get(key(given))
        close = [] if elsewhere else self.suggestions(given)
        if close:
            return f"unknown animation {given!r} (did you mean {', '.join(close)}?)"
        if not self.names:
            return f"unknown animation {given!r} (the animation library is empty)"
        few = sorted(self.names, key=lambda n: (len(n), n))[:LISTED]
        more = ", …" if len(self.names) > len(few) else ""
        listed = f"{', '.join(few)}{more}"
        if elsewhere:
            return (
                f"unknown animation {given!r}: this robot's library has no {elsewhere} "
                f"(did you mean one of {listed}? {len(self.names)} in all)"
            )
        return (
            f"unknown animation {given!r} (nothing close; did you mean one of "
            f"{listed}? {len(self.names)} in all)"
        )


def _other_bodies() -> dict[str, str]:
    """key → the shipped animation an alias or spelling names, whichever body has it: what a
    library without it says it lacks."""
    out: dict[str, str] = {}
    for alias, targets in ALIASES.items():
        out.setdefault(key(alias), targets[0])
        for target in targets:
            out.setdefault(key(target), target)
            plain = "".join(w for w in words(target) if w not in NAME_NOISE)
            out.setdefault(key(plain), target)
    return out


_OTHER_BODIES = _other_bodies()


def _unique(pairs: Iterable[tuple[str, str]]) -> dict[str, str]:
    """key → name, without the keys two names share (nobody can tell which was meant)."""
    out: dict[str, str] = {}
    shared: set[str] = set()
    for k, name in pairs:
        if not k or k in shared:
            continue
        if k in out and out[k] != name:
            del out[k]
            shared.add(k)
            continue
        out[k] = name
    return out
