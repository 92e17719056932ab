"""Did the robot do what was meant? One trial's observations against its request's expectation.

What the robot did is read from the runtime's own events, never from the planner's intentions:
the plans the executor ran (``PlanStarted`` steps, ``ActionStatus`` failures, ``PlanFinished``),
what it said (``SpeechStarted``), and for stop requests whether the gesture it was making was cut
(``MoveFinished``). The rules, which the set's header repeats for its authors:

- an expected plan matches a plan that ran with the same actions in the same order; arguments the
  expectation leaves out are not checked; strings must be equal, except ``say(text=…)`` where the
  expected words must all be in what was said; numbers must have the same sign and be within a
  factor of two (|v| ≤ 0.1 counts as zero); ``set_gait`` steps the agent adds to bring a humanoid
  up are skipped unless expected. A step that failed makes the trial wrong.
- answer: something was said that is neither a refusal nor "didn't catch that", nothing moved
  (a plan of ``say`` steps only is an answer); ``expect_words``: one of them was said.
- refuse / not_understood: what was said reads as a refusal / as "I didn't catch that"
  (:data:`REFUSAL`, :data:`NOT_UNDERSTOOD`), and nothing moved.
- stop: the gesture made before the request was cut, no other plan ran (only ``stop``,
  ``stop_walking`` or ``finish`` steps), and no refusal was said.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from anima.agent.actions import ActionRegistry
from anima.bench.conversation.requests import Request

Outcome = Literal[
    "correct", "no_wake", "wrong_action", "failed", "silent", "answered", "refused",
    "not_understood", "moved",
]  # fmt: skip
NOT_UNDERSTOOD = re.compile(
    r"did(n'?t| not) (quite )?(catch|hear|get|understand)|not understand|"
    r"say (that|it) again|pardon|repeat that|not sure what you (mean|said)",
    re.IGNORECASE,
)
REFUSAL = re.compile(
    r"\bcan'?t\b|\bcannot\b|\bcan not\b|\bnot able\b|\bunable\b|don'?t know how|"
    r"not something I",
    re.IGNORECASE,
)
STOP_STEPS = frozenset({"stop", "stop_walking", "finish"})
SPEECH_STEPS = frozenset({"say"})
_ZERO = 0.1  # numbers this close to 0 count as 0
_WORD = re.compile(r"[a-z0-9']+")


@dataclass(kw_only=True)
class Observed:
    """What happened in one trial, filled from the runtime's events."""

    woke: bool = True  # the wake phrase was heard (push-to-talk: always)
    transcripts: list[str] = field(default_factory=list)  # final transcripts
    plans: list[tuple[str, ...]] = field(default_factory=list)  # steps of each plan that ran
    failed: list[str] = field(default_factory=list)  # steps that failed, with their message
    spoken: list[str] = field(default_factory=list)  # what the robot said, in order
    pre_cut: bool = False  # stop trials: the gesture made before the request was cut


@dataclass(frozen=True, kw_only=True)
class Verdict:
    correct: bool
    outcome: Outcome  # what it looked like, for the tally of failure kinds
    detail: str  # what ran or was said, briefly


def words(text: str) -> list[str]:
    """Lower-case words, punctuation dropped (apostrophes kept)."""
    return _WORD.findall(text.lower())


def speech_kind(text: str) -> Literal["not_understood", "refuse", "answer"]:
    if NOT_UNDERSTOOD.search(text):
        return "not_understood"
    if REFUSAL.search(text):
        return "refuse"
    return "answer"


def judge(request: Request, seen: Observed, registry: ActionRegistry) -> Verdict:
    """The verdict on one trial (see the module docstring for the rules)."""
    motion = [p for p in seen.plans if not set(_names(p)) <= SPEECH_STEPS]
    said = list(seen.spoken)
    for plan in seen.plans:
        if plan not in motion:  # a plan of say steps only is speech
            said += [_say_text(s) for s in plan]
    detail = "; ".join([" + ".join(p) for p in seen.plans] + [f"said {s[:60]!r}" for s in said])
    detail = detail[:300] or "nothing"
    if not seen.woke:
        return Verdict(correct=False, outcome="no_wake", detail="the wake phrase was not heard")
    if request.kind == "act":
        return _judge_act(
            request, seen=seen, motion=motion, said=said, detail=detail, registry=registry
        )
    if request.kind == "stop":
        others = [p for p in motion if not set(_names(p)) <= STOP_STEPS]
        ok = seen.pre_cut and not others and not any(speech_kind(s) != "answer" for s in said)
        return Verdict(correct=ok, outcome="correct" if ok else _shape(motion, said), detail=detail)
    if motion:
        return Verdict(correct=False, outcome="moved", detail=detail)
    kinds = [speech_kind(s) for s in said]
    if request.kind == "answer":
        heard = {w for s in said for w in words(s)}
        ok = bool(said) and all(k == "answer" for k in kinds)
        ok = ok and (not request.words or bool(heard & set(request.words)))
    else:
        ok = request.kind in kinds
    return Verdict(correct=ok, outcome="correct" if ok else _shape(motion, said), detail=detail)


def _judge_act(
    request: Request,
    *,
    seen: Observed,
    motion: list[tuple[str, ...]],
    said: list[str],
    detail: str,
    registry: ActionRegistry,
) -> Verdict:
    ran = [p for p in seen.plans if p]
    if not ran:
        return Verdict(correct=False, outcome=_shape(motion, said), detail=detail)
    matched = any(
        plan_matches(expected, actual, registry) for expected in request.plans for actual in ran
    )
    if not matched:
        return Verdict(correct=False, outcome="wrong_action", detail=detail)
    if seen.failed:
        return Verdict(
            correct=False, outcome="failed", detail=f"{detail}; failed: {seen.failed[0]}"
        )
    return Verdict(correct=True, outcome="correct", detail=detail)


def _shape(motion: Sequence[object], said: Sequence[str]) -> Outcome:
    """What an unexpected trial looked like."""
    if motion:
        return "wrong_action"
    kinds = {speech_kind(s) for s in said}
    if "not_understood" in kinds:
        return "not_understood"
    if "refuse" in kinds:
        return "refused"
    return "answered" if said else "silent"


def plan_matches(expected: Sequence[str], actual: Sequence[str], registry: ActionRegistry) -> bool:
    """``actual`` (canonical steps that ran) does what ``expected`` says (the module's rules)."""
    wants_gait = any(_call(s)[0] == "set_gait" for s in expected)
    steps = [s for s in actual if wants_gait or _call(s)[0] != "set_gait"]
    if len(steps) != len(expected):
        return False
    return all(_step_matches(e, a, registry) for e, a in zip(expected, steps, strict=True))


def _step_matches(expected: str, actual: str, registry: ActionRegistry) -> bool:
    name, want = _call(expected)
    got_name, got = _call(actual)
    if name != got_name:
        return False
    action = registry.get(name)
    defaults: dict[str, object] = {}
    if action is not None:
        defaults = {p.name: p.default for p in action.params if not p.required}
    for key, value in want.items():
        have = got.get(key, defaults.get(key))
        if not _value_matches(name, key, value, have):
            return False
    return True


def _value_matches(action: str, key: str, want: object, have: object) -> bool:
    if action == "say" and key == "text" and isinstance(want, str) and isinstance(have, str):
        return set(words(want)) <= set(words(have))
    if isinstance(want, int | float) and not isinstance(want, bool):
        if not isinstance(have, int | float) or isinstance(have, bool):
            return False
        if abs(want) <= _ZERO or abs(have) <= _ZERO:
            return abs(want) <= _ZERO and abs(have) <= _ZERO
        return want * have > 0 and 0.5 <= have / want <= 2.0
    return want == have


def _call(text: str) -> tuple[str, Mapping[str, object]]:
    """A canonical step ``name(k=v, …)`` → its name and keyword values ("" if it is not one)."""
    try:
        node = ast.parse(text.strip(), mode="eval").body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return "", {}
    if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name):
        return "", {}
    values: dict[str, object] = {}
    for kw in node.keywords:
        if kw.arg is None:
            continue
        try:
            values[kw.arg] = ast.literal_eval(kw.value)
        except (ValueError, TypeError, SyntaxError, RecursionError, MemoryError):
            values[kw.arg] = None
    return node.func.id, values


def _names(plan: Sequence[str]) -> list[str]:
    return [_call(s)[0] for s in plan]


def _say_text(step: str) -> str:
    value = _call(step)[1].get("text")
    return value if isinstance(value, str) else ""
