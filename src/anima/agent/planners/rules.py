"""The offline rule planner: what the person said, matched against the actions' phrases.

The table comes from the registry: each phrase (``"wave"``, ``"look at me"``, ``"say {text}"``)
maps to its action with the phrase's arguments, a ``{slot}`` taking the words heard there
(numbers for number parameters, one of the choices for a choice). A request may chain commands
with "and", "then" or commas ("wave and say hello"); a split is only kept when every part is
understood, so "say hello and goodbye" still says "hello and goodbye". Fillers around a
command ("please", "can you", the wake phrase) are ignored. Anything else is answered with
"I didn't understand." and no actions.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from anima.agent.actions import Action, ActionRegistry
from anima.agent.params import Param, Value
from anima.agent.phrases import Phrase, normalize
from anima.agent.planners.base import PlannerReply

UNKNOWN = "I didn't understand."
MAX_WORDS = 80  # longer requests are not commands (and would make the split search slow)

_LEADING = (
    "please",
    "can you",
    "could you",
    "would you",
    "will you",
    "i want you to",
    "i'd like you to",
    "robot",
    "now",
    "ok",
    "okay",
)
_TRAILING = ("please", "for me", "now", "robot")
_NUMBER_WORDS = (
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
    "fifteen sixteen seventeen eighteen nineteen twenty"
)
_NUMBERS = {w: float(i) for i, w in enumerate(_NUMBER_WORDS.split(" "))}
_NUMBER = r"-?\d+(?:\.\d+)?|" + "|".join(_NUMBERS)


@dataclass(frozen=True)
class _Rule:
    action: Action
    phrase: Phrase
    pattern: re.Pattern[str] | None  # None: a literal phrase, matched by the table


class RulePlanner:
    """Maps recognized commands to actions by the registry's phrases; needs nothing else."""

    name = "rules"

    def __init__(self, registry: ActionRegistry, *, wake_phrase: str = "hey robot") -> None:
        self.registry = registry
        self._wake = normalize(wake_phrase)
        self._literal: dict[str, tuple[Action, Phrase]] = {}
        self._slotted: list[_Rule] = []
        for phrase, act in registry.phrases():
            if phrase.slots:
                self._slotted.append(_Rule(act, phrase, _compile(act, phrase)))
            else:
                self._literal.setdefault(normalize(phrase.text), (act, phrase))
        # the most literal words first: "walk forward {seconds} seconds" before "say {text}"
        self._slotted.sort(key=lambda r: -len(normalize(_SLOT_RE.sub("", r.phrase.text))))

    # ------------------------------------------------------------------ the protocol
    def plan(self, request: str) -> PlannerReply:
        actions = self.understand(request)
        if not actions:
            return PlannerReply(response=UNKNOWN)
        return PlannerReply(response="", actions=actions)

    def feedback(self, summary: str) -> PlannerReply | None:
        return None  # commands are one-shot: nothing to follow up

    def reset(self) -> None:
        """Nothing to forget."""

    def interrupt(self) -> None:
        """Nothing in flight."""

    def close(self) -> None:
        """Nothing to release."""

    # ------------------------------------------------------------------ matching
    def understand(self, request: str) -> list[str] | None:
        """The action strings for ``request``, or None when any part is not understood."""
        tokens = re.findall(r"\d+\.\d+|[a-z0-9']+|[,;.!?]", request.lower())
        segments = _segments(tokens)
        if not segments or len(tokens) > MAX_WORDS:
            return None
        return self._best(segments, 0, {})

    def _best(
        self, segments: list[tuple[str, str]], start: int, memo: dict[int, list[str] | None]
    ) -> list[str] | None:
        """Actions for segments[start:], the shortest first command that leaves the rest
        understood (memoized on ``start``)."""
        if start == len(segments):
            return []
        if start in memo:
            return memo[start]
        memo[start] = None
        for end in range(start + 1, len(segments) + 1):
            clause = " ".join(
                (sep + " " + seg).strip() if i > start else seg
                for i, (sep, seg) in enumerate(segments[start:end], start)
            )
            found = self.match(clause)
            if found is None:
                continue
            rest = self._best(segments, end, memo)
            if rest is not None:
                memo[start] = [found, *rest]
                break
        return memo[start]

    def match(self, clause: str) -> str | None:
        """One command → its action string (canonical, validated), or None."""
        clause = _strip_fillers(normalize(clause), self._wake)
        if not clause:
            return None
        hit = self._literal.get(clause)
        if hit is not None:
            act, phrase = hit
            return act.call_text(act.check_args(phrase.args))
        for rule in self._slotted:
            assert rule.pattern is not None
            m = rule.pattern.fullmatch(clause)
            if m is None:
                continue
            values: dict[str, object] = dict(rule.phrase.args)
            try:
                for slot in rule.phrase.slots:
                    values[slot] = _slot_value(rule.action.param(slot), m.group(slot))
                return rule.action.call_text(rule.action.check_args(values))
            except ValueError:
                continue
        return None


_SLOT_RE = re.compile(r"\{[A-Za-z_][A-Za-z0-9_]*\}")


def _segments(tokens: list[str]) -> list[tuple[str, str]]:
    """Tokens split at punctuation and at "and", "then", "and then", "after that":
    (separator words, text) pairs; punctuation separates without words."""
    out: list[tuple[str, str]] = []
    sep: list[str] = []
    current: list[str] = []
    i = 0
    while i < len(tokens):
        two = " ".join(tokens[i : i + 2])
        if two in ("and then", "after that"):
            token, step = two, 2
        elif tokens[i] in ("and", "then"):
            token, step = tokens[i], 1
        elif tokens[i] in _PUNCTUATION:
            token, step = "", 1
        else:
            current.append(tokens[i])
            i += 1
            continue
        if current:
            out.append((" ".join(sep), " ".join(current)))
            sep, current = [], []
        if token:
            sep.append(token)
        i += step
    if current:
        out.append((" ".join(sep), " ".join(current)))
    return out


_PUNCTUATION = frozenset(",;.!?")


def _strip_fillers(text: str, wake: str) -> str:
    changed = True
    while changed and text:
        changed = False
        for lead in (wake, *_LEADING):
            if lead and (text == lead or text.startswith(lead + " ")):
                text = text[len(lead) :].strip()
                changed = True
        for trail in _TRAILING:
            if text.endswith(" " + trail):
                text = text[: -len(trail) - 1].strip()
                changed = True
    return text


def _compile(act: Action, phrase: Phrase) -> re.Pattern[str]:
    out = []
    for word in phrase.text.split():
        m = _SLOT_RE.fullmatch(word)
        if m is None:
            out.append(re.escape(word))
            continue
        name = word[1:-1]
        out.append(f"(?P<{name}>{_slot_pattern(act.param(name))})")
    return re.compile(r"\s+".join(out))


def _slot_pattern(param: Param) -> str:
    if param.choices is not None:
        return "|".join(sorted((re.escape(_spoken(c)) for c in param.choices), key=len)[::-1])
    if param.kind in (int, float):
        return _NUMBER
    return r".+"


def _spoken(value: object) -> str:
    """A choice as it is heard: ``point_right`` → ``point right``."""
    return normalize(str(value).replace("_", " "))


def _slot_value(param: Param, heard: str) -> Value:
    if param.choices is not None:
        for choice in param.choices:
            if _spoken(choice) == heard:
                return choice
        raise ValueError(f"{heard!r} is not a choice")
    if param.kind in (int, float):
        number = _NUMBERS[heard] if heard in _NUMBERS else float(heard)
        return int(number) if param.kind is int and number.is_integer() else number
    return heard
