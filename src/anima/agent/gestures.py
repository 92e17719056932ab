"""How many gestures one answer of the agent may start with speech markers.

A reply's words and its plan's ``say`` steps may time gestures to the words (``^start(nod)``,
``^run(LOOKUP_Waving)``: :mod:`anima.language.markup`). A model that writes 24 ``^run``
markers would hold the robot waving for 75 s, so each answer starts at most
:data:`MAX_REPLY_GESTURES`: its words (:class:`~anima.agent.reply.Answer`) and its plan's
``say`` steps (the plan's :class:`~anima.agent.context.ActionContext`) each count their own.
The markers past it are dropped, with a WARNING log line; the words stay.
"""

from __future__ import annotations

import logging
import re

log = logging.getLogger(__name__)

# Gestures one reply's words (or one plan's say steps) may start (^start/^run markers): a reply
# is a few sentences, a gesture each at most; 24 ^run(LOOKUP_Waving) once kept the robot
# waving for 75 s.
MAX_REPLY_GESTURES = 4
_GESTURE_MARKER = re.compile(r"\s*\^(start|stop|wait|run)\(\s*([\w.\-]+)\s*\)")


def bounded_gestures(text: str, room: int) -> tuple[str, int, int]:
    """``text`` with at most ``room`` gesture markers (``^start``, ``^run``) kept, the first
    ones; a ``^stop``/``^wait`` of a gesture whose start was dropped goes with it. Returns the
    text, the gestures kept and the markers dropped."""
    if "^" not in text:
        return text, 0, 0
    kept_starts: set[str] = set()
    cut_starts: set[str] = set()
    started = dropped = 0

    def one(match: re.Match[str]) -> str:
        nonlocal started, dropped
        kind, name = match.group(1), match.group(2)
        if kind in ("start", "run"):
            if started < room:
                started += 1
                if kind == "start":
                    kept_starts.add(name)
                return match.group()
            if kind == "start":
                cut_starts.add(name)
        elif name not in cut_starts or name in kept_starts:
            return match.group()  # a stop or wait of a gesture that plays
        dropped += 1
        return ""

    out = _GESTURE_MARKER.sub(one, text)
    return (out.strip() if dropped else out), started, dropped


def warn_dropped(dropped: int, text: str, where: str) -> None:
    """The log line for markers dropped past :data:`MAX_REPLY_GESTURES`."""
    log.warning(
        "%s: %d gesture markers dropped (at most %d a reply): %r",
        where,
        dropped,
        MAX_REPLY_GESTURES,
        text[:80],
    )
