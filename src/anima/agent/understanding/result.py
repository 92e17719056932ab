"""What understanding a request gives: the :class:`Understanding`, and :class:`About` the robot."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

Kind = Literal["act", "answer", "refuse", "not_understood"]

NOT_UNDERSTOOD = "Sorry, I didn't catch that."


@dataclass(frozen=True, kw_only=True)
class About:
    """What the robot says about itself (from the config)."""

    name: str = "Anima"  # agent.name
    wake_phrase: str = "hey robot"  # listen.wake_phrase: ignored in front of a request


@dataclass(frozen=True, kw_only=True)
class Understanding:
    """One request, understood (or not).

    ``act``: ``actions`` are plan strings for :func:`~anima.agent.plan.parse_plan`;
    ``answer``: ``response`` answers a question or a greeting, nothing moves;
    ``refuse``: ``response`` says what it can't do and names a few things it can;
    ``not_understood``: ``response`` asks the person to say it again, nothing moves.
    """

    kind: Kind
    actions: list[str] = field(default_factory=list)
    response: str = ""
    why: str = ""  # how it was understood, for logs and tests ("phrase 'nod' ×2")


def not_understood(why: str) -> Understanding:
    return Understanding(kind="not_understood", response=NOT_UNDERSTOOD, why=why)
