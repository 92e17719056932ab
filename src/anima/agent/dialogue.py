"""One turn of the dialogue: a heard request read, planned, said and acted on, its feedback told.

What the robot says is bounded (:func:`~anima.agent.planners.base.speakable`: a few
sentences), and nothing that promises an action is said before its whole plan has validated
(:class:`~anima.agent.reply.Answer`; with a streaming planner the words go out sentence by
sentence once the plan has validated, chit-chat at once). A plan that was refused is never
announced with the model's words ("Sure!"): the robot says once per turn that it could not do
it and why (``refusal_speech``), and the planner is told so it may try again. A step that fails
is told once per turn in one short sentence ("I couldn't walk: the robot is in emergency
stop."). A request the understanding cannot read is planned as the first of the recognizer's
other readings it can, if one sounds alike (:mod:`~anima.agent.understanding.readings`). When
all steps succeeded with nothing to report the planner is told without a second request
(``acknowledge``).

:class:`Dialogue` runs on the conversation's worker thread
(:class:`~anima.agent.conversation.Conversation`), which owns the generations a wake bumps:
everything a turn says goes through the conversation's ``say``, which drops it once the turn is
no longer ``current``.
"""

from __future__ import annotations

import collections
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING

from anima.agent.actions import ActionRegistry
from anima.agent.executor import Executor, adds_nothing
from anima.agent.latency import TurnTiming
from anima.agent.plan import refusal_speech, rejection_feedback
from anima.agent.planners.base import (
    Acknowledges,
    Planner,
    PlannerReply,
    Streams,
    Understands,
    apology,
)
from anima.agent.reply import ActionWords, Answer, failure_speech
from anima.agent.understanding import About, Understander, Understanding, asr_phrases
from anima.agent.understanding.readings import choose_reading
from anima.errors import AnimaError

if TYPE_CHECKING:
    from anima.listening.listener import Listener

log = logging.getLogger(__name__)

PlannerCall = Callable[..., PlannerReply | None]


class Dialogue:
    """What one heard request becomes (see the module docstring). ``say(generation, text)``
    and ``current(generation)`` are the conversation's; ``listener`` gives the listener in use
    (it is attached after the conversation is made); ``timings`` gets each turn's
    :class:`~anima.agent.latency.TurnTiming`."""

    def __init__(
        self,
        registry: ActionRegistry,
        planner: Planner,
        executor: Executor,
        *,
        about: About,
        listener: Callable[[], Listener | None],
        say: Callable[[int, str], bool],
        current: Callable[[int], bool],
        notice: Callable[[str], None],
        now: Callable[[], float],
        timings: collections.deque[TurnTiming],
        feedback_rounds: int,
    ) -> None:
        self.registry = registry
        self.planner = planner
        self.executor = executor
        self._about = about
        self._listener = listener
        self._say = say
        self._current = current
        self._notice = notice
        self._now = now
        self._timings = timings
        self._rounds = feedback_rounds
        self._words = ActionWords(registry)
        self._streams = isinstance(planner, Streams) and planner.streaming
        self._understander: Understander | None = None  # for a planner that has none

    def reading(self, text: str, others: tuple[str, ...]) -> str:
        """``text``, or when the understanding reads it as nothing, the first of its other
        readings it reads (:func:`~anima.agent.understanding.readings.pick_reading`), else the
        utterance read again with the nearest command phrases as hints, when the recognizer
        can (:meth:`~anima.listening.whisper.asr.WhisperAsr.reread`) and the planner is the rule
        planner: an LLM reads free speech itself, and most of its chit-chat reads as nothing
        here, so reading again would delay nearly every turn by a decode for little."""
        from anima.listening.asr import Rereads

        reread = None
        listener = self._listener()
        if isinstance(self.planner, Understands) and listener is not None:
            recognizer = listener.recognizer
            reread = recognizer.reread if isinstance(recognizer, Rereads) else None
        phrases = asr_phrases(self.registry) if reread is not None else []
        chosen, how = choose_reading(
            text, others, self.understand(), reread=reread, phrases=phrases
        )
        if how == "another reading":
            self._notice(f"heard {text[:60]!r}, read as {chosen[:60]!r} (another reading)")
        elif how:
            self._notice(f"heard {text[:60]!r}, read again as {chosen[:60]!r}")
        return chosen

    def understand(self) -> Callable[[str], Understanding]:
        """The planner's understanding of a request (the rule planner's: it knows the last
        plan), or one of the registry's own."""
        if isinstance(self.planner, Understands):
            return self.planner.understanding
        if self._understander is None:
            self._understander = Understander(self.registry, about=self._about)
        return self._understander.understand

    def turn(
        self, generation: int, text: str, heard_t: float, *, hold: Callable[[], bool] | None = None
    ) -> None:
        """Plan ``text``, say and act on the answer, and follow its feedback for at most
        ``feedback_rounds`` more requests, while ``generation`` is current. ``hold``: an early
        reply's (:class:`~anima.agent.reply.Answer`): its plan starts only once it says yes."""
        answer = self._ask(generation, self.planner.plan, text, heard_t=heard_t, hold=hold)
        rounds = 0
        said_refusal = said_failure = False  # each said at most once per turn
        while answer is not None and self._current(generation):
            refused = answer.refused or answer.not_started
            if refused is not None:
                # the model's words were about a plan that will not run: say that instead
                self._notice(f"plan rejected: {refused}")
                if not said_refusal:
                    said_refusal = True
                    self._say(generation, self._refusal(refused))
                if answer.refused is None:
                    return  # validated, but the executor would not run it: no retry helps
                answer = self._follow_up(generation, rejection_feedback(answer.refused), rounds)
                rounds += 1
                continue
            if answer.task is None:
                return  # words only
            result = answer.task.join()
            if result is None or result.interrupted or result.finished:
                return
            if not self._current(generation):
                return
            failure = failure_speech(result)
            if failure is not None and not said_failure:
                said_failure = True
                self._say(generation, failure)
            if result.feedback is None:
                return
            if adds_nothing(result):
                self._acknowledge(result.feedback)  # nothing to learn: no second request
                return
            answer = self._follow_up(generation, result.feedback, rounds)
            rounds += 1

    @staticmethod
    def _refusal(error: AnimaError) -> str:
        from anima.errors import PlanError

        if isinstance(error, PlanError):
            return refusal_speech(error)
        return f"Sorry, I can't do that now: {str(error)[:100]}."

    def _follow_up(self, generation: int, summary: str, rounds: int) -> Answer | None:
        if rounds >= self._rounds:
            return None
        return self._ask(generation, self.planner.feedback, summary)

    def _acknowledge(self, summary: str) -> None:
        if isinstance(self.planner, Acknowledges):
            self.planner.acknowledge(summary)

    def _ask(
        self,
        generation: int,
        call: PlannerCall,
        text: str,
        *,
        heard_t: float | None = None,
        hold: Callable[[], bool] | None = None,
    ) -> Answer | None:
        """A planner call, its reply taken by an :class:`Answer` (as it streams, when the
        planner streams); None when the turn is over (interrupted, or nothing came back). A
        planner that raises (its bug, not its server's) is apologized for like a server
        failure, so the person hears something and the next turn works. ``heard_t``: the
        turn's transcript time, noted in ``timings`` with the planner's answer's."""
        answer = Answer(
            self.registry,
            self.executor,
            self._words,
            speak=lambda words: self._say(generation, words),
            current=lambda: self._current(generation),
            now=self._now,
            hold=hold,
        )
        try:
            reply = call(text, answer) if self._streams else call(text)
        except Exception as exc:
            log.exception("planner %s raised", self.planner.name)
            reason = f"{type(exc).__name__}: {exc}"
            self._notice(f"planner failed: {reason[:200]}")
            reply = apology(reason[:200])
        answer.close()  # from here on, nothing late from the planner's request mixes in
        if heard_t is not None:
            planned = answer.first_t if answer.first_t is not None else self._now()
            self._timings.append(TurnTiming(heard_t=heard_t, planned_t=planned))
        if reply is None or reply.interrupted or not self._current(generation):
            return None
        if reply.error is not None and (answer.planned or answer.spoke):
            # a stream that broke after its plan or words went out: those stand, no apology
            self._notice(f"the planner's reply broke off: {reply.error[:200]}")
        elif not reply.streamed:
            answer.take(reply.actions, reply.response)
        return answer
