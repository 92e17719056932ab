"""The early reply of full duplex (``listen.turn_early_s``): the one reply begun at a pause that
may end the turn, until the final confirms it or something takes it back.

:class:`EarlyReplies` is the conversation's record of it (:mod:`~anima.agent.conversation` says
when a reply begins and what decides it). It keeps the request in the conversation's transcript
from the moment the reply begins, before the reply's words, and drops both when the reply is
taken back; ``take_back`` (the conversation's) stops what the turn started and makes the planner
forget it. The plan of a reply begun early waits on :meth:`EarlyReply.wait` before it moves.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

from anima.agent.summary import Spoken
from anima.listening.asr import normalize
from anima.logtext import quoted

log = logging.getLogger(__name__)

WAIT_S = 30.0  # a reply's plan waits at most this for its final (listen.max_utterance_s's range)

Settled = Literal["none", "confirmed", "taken back", "stale"]


@dataclass(kw_only=True)
class EarlyReply:
    """A reply begun at a pause: its turn, its words, the decision."""

    generation: int
    text: str  # normalized: a final reading the same words confirms it
    mark: int  # the conversation's transcript before it (Spoken.mark)
    caught: bool = True  # heard with enough confidence; else its reply is "didn't catch that"
    decided: threading.Event = field(default_factory=threading.Event)
    confirmed: bool = False

    def wait(self) -> bool:
        """Until the final confirms it (True) or it is taken back (False)."""
        return self.decided.wait(WAIT_S) and self.confirmed


class EarlyReplies:
    """At most one reply begun early (module docstring). ``current(generation)`` says whether
    its turn is still the conversation's; ``take_back()`` stops that turn."""

    def __init__(
        self,
        *,
        spoken: Spoken,
        current: Callable[[int], bool],
        take_back: Callable[[], None],
    ) -> None:
        self._spoken = spoken
        self._current = current
        self._take_back = take_back
        self._lock = threading.Lock()
        self._reply: EarlyReply | None = None
        self.begun = 0  # replies begun early …
        self.taken_back = 0  # … and of them taken back (for benchmarks and the dashboard)

    @property
    def pending(self) -> bool:
        return self._reply is not None

    def begin(self, generation: int, text: str, *, caught: bool = True) -> EarlyReply:
        """A reply begins for ``text`` (one begun before is taken back first); ``caught``:
        heard with enough confidence to act on (else the reply says it was not caught)."""
        self.settle(None, "another pause")
        mark = self._spoken.mark()
        reply = EarlyReply(generation=generation, text=normalize(text), mark=mark, caught=caught)
        with self._lock:
            self._reply = reply
        self._spoken.heard(text)  # before the reply's words; dropped with them if taken back
        self.begun += 1
        log.info("reply begun early, at a pause: %s", quoted(text))
        return reply

    def settle(self, final: str | None, why: str = "", *, caught: bool = True) -> Settled:
        """Decide the reply begun early, if any: ``confirmed`` when ``final`` reads its words
        as surely (``caught`` as the reply was; and its turn is still current), else ``taken
        back`` (``why``); ``none`` when there was none, ``stale`` when a wake had already
        dropped its turn."""
        with self._lock:
            reply, self._reply = self._reply, None
        if reply is None:
            return "none"
        current = self._current(reply.generation)
        same = final is not None and normalize(final) == reply.text and caught == reply.caught
        if current and same:
            reply.confirmed = True
            reply.decided.set()
            log.info("the turn is over: the early reply stands")
            return "confirmed"
        if current:
            self._take_back()  # its words stop, its plan never starts, the planner forgets
            self._spoken.drop_since(reply.mark)
            self.taken_back += 1
        reply.decided.set()
        log.info("early reply taken back: %s", why or "the final read other words")
        return "taken back" if current else "stale"
