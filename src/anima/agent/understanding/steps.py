"""A request of several commands: "nod twice then smile", "wave and say hello".

The words are cut at "and", "then", "and then", "after that" and punctuation (and, when that
is not understood, where a part's first word comes back: "look left look right"); a cut is kept
only when every part is understood, so "say hello and goodbye" still says "hello and goodbye".
The first command that leaves the rest understood wins (memoized: linear in practice). A part
that is only a direction (and an amount) borrows the verb before it ("look left and right",
"turn left then right a bit").

Anything before a ``stop()`` would be stopped at once: "wait, stop!" is just ``stop()`` (but
"walk forward for five seconds, then stop" is two steps); a word after "stop," with only the
comma between is what was stopped ("okay, stop, nod." as Whisper hears "okay stop that"); and a
stop among words not understood, or at the start of a part not understood ("cancel, note",
"stop moving clean"), is still a stop.
"""

from __future__ import annotations

from dataclasses import dataclass

from anima.agent.understanding import modifiers
from anima.agent.understanding.apply import Limit, Match
from anima.agent.understanding.matcher import Matcher
from anima.agent.understanding.words import PUNCTUATION, wordset

# "than", "thin", "en" (of "en-bow"): how Whisper writes "then"; a cut is kept only when
# every part is understood, so a join word that meant something else costs nothing
_JOINS = ("and then", "after that", "and", "then", "than", "thin", "en", "also")
STOP = "stop()"


@dataclass(frozen=True)
class Segment:
    sep: tuple[str, ...]  # the joining words before it ("and", "then")
    words: tuple[str, ...]


@dataclass(frozen=True)
class _Part:
    sep: tuple[str, ...]  # the joining words before it (none: only punctuation)
    words: int  # how many words it was
    match: Match


@dataclass(frozen=True)
class Steps:
    """The outcome for a whole request."""

    match: Match | None  # every part understood
    limit: Limit | None  # a part understood but beyond what its action allows
    missed: tuple[str, ...] | None  # the first part not understood on its own


def segments(toks: list[str]) -> list[Segment]:
    out: list[Segment] = []
    sep: list[str] = []
    current: list[str] = []
    i = 0
    while i < len(toks):
        for join in _JOINS:
            words = join.split()
            if toks[i : i + len(words)] == words:
                token, step = join, len(words)
                break
        else:
            if toks[i] in PUNCTUATION:
                token, step = "", 1
            else:
                current.append(toks[i])
                i += 1
                continue
        if current:
            out.append(Segment(tuple(sep), tuple(current)))
            sep, current = [], []
        if token:
            sep.extend(token.split())
        i += step
    if current:
        out.append(Segment(tuple(sep), tuple(current)))
    return out


def counted(segs: list[Segment]) -> list[Segment]:
    """ "blink, twice and smile" → "blink twice", "smile": a count alone after a comma is
    the command's before it (Whisper writes a pause as a comma), not the next one's."""
    out: list[Segment] = []
    for seg in segs:
        read = modifiers.read(list(seg.words)) if len(seg.words) <= _LONGEST_COUNT else None
        alone = read is not None and not read[1] and read[0].count is not None
        if out and not seg.sep and alone:
            out[-1] = Segment(out[-1].sep, (*out[-1].words, *seg.words))
        else:
            out.append(seg)
    return out


def at_repeats(segs: list[Segment]) -> list[Segment]:
    """ "look left look right" → "look left", "look right": a part cut again where its first
    word comes back (tried when the request is not understood as it was cut)."""
    out: list[Segment] = []
    for seg in segs:
        words, sep = list(seg.words), seg.sep
        cut = [j for j in range(1, len(words)) if words[j] == words[0]]
        for start, end in zip([0, *cut], [*cut, len(words)], strict=True):
            out.append(Segment(sep, tuple(words[start:end])))
            sep = ()
    return out


def understand_steps(matcher: Matcher, toks: list[str], *, sounds: bool = False) -> Steps:
    """The request's steps; ``sounds``: a part may be a phrase it sounds like
    (:mod:`.soundalike`), asked only once the words as heard are not understood."""
    segs = counted(segments(toks))
    steps = _understand(matcher, segs, sounds)
    if steps.match is None:
        again = at_repeats(segs)
        if len(again) > len(segs):
            recut = _understand(matcher, again, sounds)
            if recut.match is not None:
                return recut
    return steps


def _understand(matcher: Matcher, segs: list[Segment], sounds: bool) -> Steps:
    limits: list[Limit] = []
    memo: dict[tuple[int, str], tuple[_Part, ...] | None] = {}

    def best(start: int, verb: str) -> tuple[_Part, ...] | None:
        """The parts of segs[start:]; the shortest first command that leaves the rest
        understood."""
        if start == len(segs):
            return ()
        key = (start, verb)
        if key in memo:
            return memo[key]
        memo[key] = None
        for end in range(start + 1, len(segs) + 1):
            words = list(segs[start].words)
            for seg in segs[start + 1 : end]:
                words.extend([*seg.sep, *seg.words])
            found = matcher.clause(words, sounds=sounds)
            if found is None and verb and start > 0 and _only_direction(words):
                found = matcher.clause([verb, *words], sounds=sounds)  # "look left and right"
            if isinstance(found, Limit):
                limits.append(found)
                continue
            if found is None:
                continue
            rest = best(end, _verb(matcher, words) or verb)
            if rest is not None:
                memo[key] = (_Part(segs[start].sep, len(words), found), *rest)
                break
        return memo[key]

    parts = best(0, "") if segs else None
    if parts is not None:
        actions: list[str] = []
        stopped = False
        for part in parts:
            if stopped and not part.sep and part.words == 1:
                continue  # "stop, nod.": ASR's "stop that" (a stop's object, not a step)
            stopped = part.match.actions == (STOP,)
            if stopped and not _LATER & set(part.sep):
                actions = []  # "wave, no wait, stop!": what came before would be stopped
            actions.extend(part.match.actions)
        return Steps(Match(tuple(actions), "; ".join(p.match.why for p in parts)), None, None)
    missed = None
    stop = False
    for seg in segs:
        found = matcher.clause(list(seg.words), sounds=sounds)
        if (isinstance(found, Match) and found.actions == (STOP,)) or _stops(matcher, seg.words):
            stop = True
        elif found is None and missed is None:
            missed = seg.words
    if stop:  # "cancel, note": a stop is never the wrong thing to do, whatever came with it
        return Steps(Match((STOP,), "a stop among words not understood"), None, None)
    return Steps(None, limits[0] if limits else None, missed)


_LONGEST_COUNT = 4  # words of the longest count ("a couple of times")
_LONGEST_STOP = 4  # words of the longest stop phrase looked for at a part's start
_LATER = frozenset({"then", "than", "after"})  # "walk for 5 seconds then stop": a step, in turn
_DIRECTIONS = wordset("left right up down forward forwards backward backwards back around")
_ALONG = wordset("to the your my a bit little more again slightly")


def _stops(matcher: Matcher, words: tuple[str, ...]) -> bool:
    """ "stop moving clean", "okay stop down": a part that begins with a stop, whatever ASR
    made of the rest (only asked when the request is not understood as a whole)."""
    for k in range(1, min(len(words), _LONGEST_STOP + 1)):
        found = matcher.clause(list(words[:k]))
        if isinstance(found, Match) and found.actions == (STOP,):
            return True
    return False


def _only_direction(words: list[str]) -> bool:
    """ "right", "to the left a bit": a part that borrows the verb before it."""
    return bool(_DIRECTIONS & set(words)) and set(words) <= _DIRECTIONS | _ALONG


def _verb(matcher: Matcher, words: list[str]) -> str:
    """The first word of a command once politeness is off ("please look left" → "look")."""
    kept = matcher.strip(list(words))
    return kept[0] if kept else ""
