"""What understanding a request gives: the :class:`Understanding`, and :class:`About` the robot."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

Kind = Literal["act", "answer", "refuse", "not_understood"]

# What a request heard well but not understood starts with: "I didn't catch that" is only for
# words heard too poorly to act on (the conversation's NOT_CAUGHT), never for a typed ``ask``
NOT_UNDERSTOOD = "Sorry, I didn't understand"
MAX_QUOTED_WORDS = 8  # a request not understood is quoted back when it is this short


@dataclass(frozen=True, kw_only=True)
class About:
    """What the robot says about itself (from the config)."""

    name: str = "Anima"  # agent.name (or the persona's)
    wake_phrase: str = "hey robot"  # listen.wake_phrase: ignored in front of a request
    made_by: str = ""  # the persona's: "who made you?"
    greeting: str = ""  # the persona's: "hello"
    offers: tuple[str, ...] = ()  # the persona's actions: what "what can you do" names


@dataclass(frozen=True, kw_only=True)
class Understanding:
    """One request, understood (or not).

    ``act``: ``actions`` are plan strings for :func:`~anima.agent.plan.parse_plan`;
    ``answer``: ``response`` answers a question or a greeting, nothing moves;
    ``refuse``: ``response`` says what it can't do and names a few things it can;
    ``not_understood``: ``response`` says what was not understood and what the robot can do,
    nothing moves.
    """

    kind: Kind
    actions: list[str] = field(default_factory=list)
    response: str = ""
    why: str = ""  # how it was understood, for logs and tests ("phrase 'nod' ×2")


def not_understood(why: str, heard: list[str] | None = None, can: str = "") -> Understanding:
    """Not understood: "Sorry, I didn't understand “blorp zing”. I can wave, nod, …" — the
    words quoted back when short (``heard``), and what the robot can do (``can``)."""
    what = "that"
    if heard and len(heard) <= MAX_QUOTED_WORDS:
        what = f"“{' '.join(heard)}”"
    response = f"{NOT_UNDERSTOOD} {what}." + (f" I can {can}." if can else "")
    return Understanding(kind="not_understood", response=response, why=why)
