"""Phrases: the words that ask for an action, for the rule planner and the ASR grammar."""

from __future__ import annotations

import re
from collections.abc import Mapping

from anima.agent.params import Value
from anima.errors import ActionDefinitionError

_SLOT = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")
_WORDS = re.compile(r"[a-z0-9']+|\{[A-Za-z_][A-Za-z0-9_]*\}")


def normalize(text: str) -> str:
    """Lower case, words only, single spaces: how phrases and heard requests are compared."""
    return " ".join(re.findall(r"\d+\.\d+|[a-z0-9']+", text.lower()))


class Phrase:
    """Words that ask for an action, with the arguments they imply.

    ``Phrase("wave", name="LOOKUP_Waving")`` — saying "wave" plays that animation;
    ``Phrase("say {text}")`` — a slot: the words heard there become the ``text`` argument.
    A plain string in ``phrases=`` is a phrase without arguments.
    """

    __slots__ = ("args", "slots", "text")

    def __init__(self, text: str, /, **args: Value) -> None:
        words = _WORDS.findall(text.lower().replace("{", " {").replace("}", "} "))
        if not words:
            raise ActionDefinitionError(f"phrase {text!r} has no words")
        # keep slot names as written (they are parameter names)
        self.slots: tuple[str, ...] = tuple(_SLOT.findall(text))
        it = iter(self.slots)
        self.text = " ".join("{" + next(it) + "}" if w.startswith("{") else w for w in words)
        self.args: Mapping[str, Value] = dict(args)

    def __repr__(self) -> str:
        extra = "".join(f", {k}={v!r}" for k, v in self.args.items())
        return f"Phrase({self.text!r}{extra})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Phrase) and (self.text, self.args) == (other.text, other.args)

    def __hash__(self) -> int:
        return hash((self.text, tuple(sorted(self.args.items(), key=lambda kv: kv[0]))))
