"""A sense and a command's modifiers → its plan strings, or the limit it is past.

"walk forward for two seconds" puts 2 into ``walk_forward``'s duration parameter; "a bit" halves
its default, "slowly" halves its default speed; "three steps" is three seconds of walking, "one
metre" is a metre at the default speed, "90 degrees" is a quarter turn at the default rate.
An action without a duration parameter takes no duration ("nod for two seconds" is not
understood); one past its bounds is a :class:`Limit` the robot says ("walk for an hour").
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from anima.agent.actions import Action
from anima.agent.params import Param, Value
from anima.agent.understanding.lexicon import POINT_OF_VIEW
from anima.agent.understanding.modifiers import Amount, Modifiers, Pace
from anima.agent.understanding.senses import Sense, duration_param

MAX_REPEAT = 5  # "nod 40 times" is refused: a count past this is not a gesture any more
STEP_S = 1.0  # "three steps": about one step a second at the default walking speed


@dataclass(frozen=True)
class Match:
    actions: tuple[str, ...]
    why: str


@dataclass(frozen=True)
class Limit:
    """Understood, but past what the action allows: said instead of done."""

    said: str


ClauseResult = Match | Limit | None


def apply(sense: Sense, mods: Modifiers, *, heard: list[str] | None = None) -> ClauseResult:
    """The sense's call with the modifiers as arguments, repeated ``count`` times; ``heard``:
    the words that named it, repeated in a :class:`Limit` ("I can't walk forward for…")."""
    act = sense.action
    values: dict[str, object] = dict(sense.args)
    why = sense.source
    dur = duration_param(act)
    if mods.measured and dur is None and mods.roughly:
        pass  # "look up for a second": a brief look is a look
    elif mods.measured:
        if dur is None or dur.name in values:
            return None  # "nod for two seconds": nothing to put it in
        seconds = _seconds(act, mods)
        if seconds is None:
            return None
        values[dur.name] = _number(dur, seconds)
        why += f", {dur.name}={seconds:g}"
    elif mods.amount is not None and dur is not None and dur.name not in values:
        values[dur.name] = _number(dur, _scaled(dur, mods.amount))
        why += f", {mods.amount.value} amount"
    pace = _pace_param(act)
    if mods.pace is not None and pace is not None and pace.name not in values:
        values[pace.name] = _number(pace, _paced(pace, mods.pace))
        why += f", {mods.pace.value}"
    try:
        checked = act.check_args(values)
    except ValueError:
        if mods.measured and dur is not None and dur.bounds is not None:
            asked = values.get(dur.name)
            low, high = dur.bounds
            words = heard if heard is not None else sense.said.split()
            what = " ".join(POINT_OF_VIEW.get(w, w) for w in words)
            if isinstance(asked, int | float) and asked < low:
                return Limit(f"Sorry, I can't {what} for less than {low:g} seconds.")
            return Limit(f"Sorry, I can't {what} for more than {high:g} seconds.")
        return None
    count = mods.count or 1
    if count > MAX_REPEAT:
        return Limit(f"Sorry, I can't do that more than {MAX_REPEAT} times in a row.")
    if not act.params or act.name in ("stop", "finish"):
        count = 1  # "stop twice" is one stop
    if count > 1:
        why += f" ×{count}"
    return Match((act.call_text(checked),) * count, why)


def _pace_param(act: Action) -> Param | None:
    """The parameter that says how fast (``speed``, ``rate``), when it has a default."""
    for p in act.params:
        if p.name in ("speed", "rate") and isinstance(p.default, int | float):
            return p
    return None


def _paced(p: Param, pace: Pace) -> float:
    """Half or one and a half times the default speed, within the bounds."""
    value = float(p.default) * (0.5 if pace is Pace.SLOW else 1.5)
    if p.bounds is not None:
        value = min(max(value, p.bounds[0]), p.bounds[1])
    return value


def _seconds(act: Action, mods: Modifiers) -> float | None:
    if mods.seconds is not None:
        return mods.seconds
    if mods.steps is not None:
        return mods.steps * STEP_S
    if mods.metres is not None:
        speed = _default(act, "speed")
        return None if not speed else mods.metres / speed
    if mods.degrees is not None:
        rate = _default(act, "rate")  # radians per second
        return None if not rate else mods.degrees * math.pi / 180 / rate
    return None


def _default(act: Action, name: str) -> float | None:
    for p in act.params:
        if p.name == name and not p.required and isinstance(p.default, int | float):
            return float(p.default)
    return None


def _scaled(dur: Param, amount: Amount) -> float:
    base = float(dur.default) if isinstance(dur.default, int | float) else 2.0
    value = base / 2 if amount is Amount.SMALL else base * 2
    if dur.bounds is not None:
        value = min(max(value, dur.bounds[0]), dur.bounds[1])
    return value


def _number(p: Param, value: float) -> Value:
    value = round(value, 2)
    return int(value) if p.kind is int else value
