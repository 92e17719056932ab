"""What the robot says of a planner's answer, and when: nothing that promises an action before
the whole plan has validated, and the plan's own words never cut by its own ``stop()``.

An :class:`Answer` takes a reply as it arrives — streamed (the plan once whole, the words a
sentence at a time) or all at once — and decides for each sentence:

* once the plan has validated and started (or the reply has no plan), the words go out at once;
* before that, a sentence that might promise an action ("Let me dance!") is held, and said only
  if the plan validates; a refused plan's words are dropped (the caller says why instead);
  a sentence that promises nothing (:class:`ActionWords`: no action word, no "let me", "sure"…)
  is said at once, so chit-chat streams even when the tool calls would come at its end;
* a plan with ``stop()`` steps gets its words only after the last of them has run: the stop is
  for what was going on before the plan, not for the robot's own "Okay.".

What an answer says is bounded as a whole (:data:`~anima.agent.planners.base.MAX_SPOKEN_CHARS`),
and so are the gestures its words start (:mod:`anima.agent.gestures`: at most
:data:`~anima.agent.gestures.MAX_REPLY_GESTURES` ``^start``/``^run`` markers a reply, the rest
dropped with a log line; a marker cut off at the reply's end is dropped by
:func:`~anima.agent.planners.base.speakable`).
:func:`failure_speech` is the short sentence the person hears when a step fails.
"""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

from anima import commands as cmd
from anima.agent.executor import PlanResult, PlanTask, StepResult
from anima.agent.gestures import MAX_REPLY_GESTURES, bounded_gestures, warn_dropped
from anima.agent.plan import parse_plan
from anima.agent.planners.base import MAX_SPOKEN_CHARS, Understands, speakable
from anima.errors import AnimaError, InvalidCommandError, PlanError
from anima.events import StepStatus
from anima.language import markup

if TYPE_CHECKING:
    from anima.agent.actions import ActionRegistry
    from anima.agent.executor import Executor

log = logging.getLogger(__name__)


# words that promise something whatever the registry holds ("Sure!", "Let me…", "Watch this")
_PROMISES = (
    "let me",
    "i'll",
    "i will",
    "i'm going to",
    "i am going to",
    "watch",
    "here goes",
    "here you go",
    "sure",
    "okay",
    "ok",
    "of course",
    "right away",
    "gladly",
    "happy to",
    "coming up",
    "no problem",
    "i can",
    "can do",
    "will do",
    "on it",
    "i'd",
    "i would",
    "love to",
    "my pleasure",
    "alright",
    "all right",
    "yes",
)
# words of phrases and names too common in chit-chat to mark a promise ("that's", "thank")
_COMMON = frozenset(
    (
        *("a", "an", "the", "be", "do", "get", "go", "take", "that", "that's", "we", "we're"),
        *("end", "hold", "start", "repeat", "say", "introduce", "thank", "tell", "never"),
        *("forget", "make", "put", "show", "shut", "act", "cancel", "face", "eyes", "head"),
        *("animation", "target", "play", "set", "motion", "gait", "lookup", "posture"),
        *("default", "hello", "hi", "goodbye", "name", "fine", "well"),
    )
)
_WORD = re.compile(r"[a-z']+")


class ActionWords:
    """The words that name something the robot can do: the actions' names, the first word of
    each phrase, the values of their choices (nod, smile), with the usual promises."""

    def __init__(self, registry: ActionRegistry) -> None:
        words: set[str] = set()
        for act in registry:
            words.update(w for w in act.name.lower().split("_") if len(w) > 2)
            for phrase in act.phrases:
                first = _WORD.findall(phrase.text.lower())
                if first:
                    words.add(first[0])
            for param in act.params:
                for choice in param.choices or ():
                    words.update(_WORD.findall(str(choice).lower().replace("_", " ")))
        self.words = frozenset(w for w in words if w not in _COMMON)

    def promise(self, sentence: str) -> bool:
        """Whether ``sentence`` might promise an action (then it waits for the plan)."""
        text = " ".join(_WORD.findall(sentence.lower().replace("’", "'")))
        if any(re.search(rf"\b{re.escape(p)}\b", text) for p in _PROMISES):
            return True
        return any(w in self.words or w.rstrip("s") in self.words for w in text.split())


class Answer:
    """One planner answer, taken as it arrives (a :class:`~anima.agent.planners.base.ReplySink`).

    ``speak(text) -> bool`` says one sentence if the turn is still current (False: it is not);
    ``current()`` says whether the turn still is. After the planner has returned, :meth:`close`
    makes late calls (an abandoned request's thread) do nothing. ``hold()``, for a reply begun
    early (at a pause that may end the turn), blocks until the turn is confirmed (True) or
    taken back (False): the words go out at once, the plan's first step that is not speech
    waits for it (:meth:`~anima.agent.executor.Executor.start`).
    """

    def __init__(
        self,
        registry: ActionRegistry,
        executor: Executor,
        words: ActionWords,
        *,
        speak: Callable[[str], bool],
        current: Callable[[], bool],
        now: Callable[[], float] | None = None,
        hold: Callable[[], bool] | None = None,
    ) -> None:
        self._registry = registry
        self._hold = hold
        self._executor = executor
        self._words = words
        self._speak = speak
        self._current = current
        self._now = now
        self.first_t: float | None = None  # ``now()`` when the plan or words first came
        self._lock = threading.RLock()
        self._held: list[str] = []
        self._open = True  # False once closed: late calls do nothing
        self._release_after: int | None = None  # the last stop() step's index
        self.state = "waiting"  # waiting | speaking | refused
        self.planned = False  # the plan (or its absence) has arrived
        self.task: PlanTask | None = None
        self.refused: PlanError | None = None  # the plan did not validate
        self.not_started: AnimaError | None = None  # it validated but the executor refused it
        self.said = 0  # characters said
        self.gestures = 0  # gesture markers (^start, ^run) said
        self.spoke = False

    # ------------------------------------------------------------------ the sink
    def actions(self, actions: list[str]) -> None:
        with self._lock:
            if self._open:
                self._arrived()
                self._actions(actions)

    def words(self, text: str) -> None:
        with self._lock:
            if self._open:
                self._arrived()
                self._words_of(text)

    # ------------------------------------------------------------------ the caller
    def take(self, actions: list[str], response: str) -> None:
        """A reply that was not streamed (or an apology): its plan, then its words as one
        utterance. Taken after :meth:`close`: nothing late from the planner mixes in."""
        with self._lock:
            self._arrived()
            self._actions(actions)
            if response:
                self._words_of(response)

    def close(self) -> None:
        """The planner has returned: late calls from its request's thread do nothing, and
        words still held for a plan that never came are dropped."""
        with self._lock:
            self._open = False
            if self.state == "waiting" and not self.planned:
                self._held = []

    # ------------------------------------------------------------------ inside
    def _arrived(self) -> None:
        if self.first_t is None and self._now is not None:
            self.first_t = self._now()

    def _actions(self, actions: list[str]) -> None:
        if self.planned:
            return
        self.planned = True
        if not actions:
            self._release()
            return
        try:
            plan = parse_plan(self._registry, actions)
        except PlanError as exc:
            self.refused, self.state, self._held = exc, "refused", []
            return
        if not self._current():
            return
        stops = [step.index for step in plan.steps if step.name == "stop"]
        self._release_after = max(stops) if stops else None
        try:
            self.task = self._executor.start(
                plan, preempt=True, on_step=self._step_done, hold=self._hold
            )
        except AnimaError as exc:
            self.not_started, self.state, self._held = exc, "refused", []
            return
        if not self._current():  # a wake came while it started
            self.task.cancel("interrupted")
            return
        if self._release_after is None:
            self._release()

    def _words_of(self, text: str) -> None:
        if self.state == "refused":
            return
        if self.state == "speaking":
            self._say(text)
        elif not self._held and not self._words.promise(text):
            self._say(text)  # promises nothing: no plan can make it untrue
        else:
            self._held.append(text)

    def _step_done(self, step: StepResult) -> None:
        # on the plan's thread: the plan's own words wait for its last stop() to have run
        if self._release_after is not None and step.index == self._release_after:
            with self._lock:
                if step.status is not StepStatus.CANCELED:
                    self._release()

    def _release(self) -> None:
        self.state = "speaking"
        held, self._held = self._held, []
        for text in held:
            self._say(text)

    def _say(self, text: str) -> None:
        room = MAX_SPOKEN_CHARS - self.said
        text = speakable(text, max(room, 0)) if room > 0 else ""
        text, started, dropped = bounded_gestures(text, MAX_REPLY_GESTURES - self.gestures)
        if dropped:
            warn_dropped(dropped, text, "reply")
        if text and self._speak(text):
            self.gestures += started
            self.said += len(text) + 1
            self.spoke = True


def failure_speech(result: PlanResult) -> str | None:
    """The sentence the person hears when a step failed ("I couldn't walk: the robot is in
    emergency stop."); None when no step failed."""
    failed = [s for s in result.steps if s.status is StepStatus.FAILED]
    if not failed:
        return None
    step = failed[0]
    return speakable(f"I couldn't {_doing(step)}: {_why(step.message)}.", 160)


_VERBS = {
    "walk_forward": "walk",
    "walk_backward": "walk back",
    "turn": "turn",
    "stop_walking": "stop walking",
    "set_gait": "get ready",
    "stand_motion": "do that",
    "posture": "change my posture",
    "look_at": "look there",
    "look_at_target": "look there",
    "say": "say that",
    "wait": "wait",
    "stop": "stop",
}


def _doing(step: StepResult) -> str:
    if step.action == "play_animation":
        name = re.search(r"name='([^']{1,40})'", step.text)
        return f"do the {_plain_name(name.group(1))}" if name else "do that"
    return _VERBS.get(step.action, step.action.replace("_", " "))


def _plain_name(name: str) -> str:
    words = name.replace("LOOKUP_", "").replace("_", " ").strip().lower()
    return words.removesuffix("ing") if words.endswith("waving") else words


def _why(message: str) -> str:
    """The step's reason in a few words: the known ones said plainly, others cut short."""
    low = message.lower()
    if "emergency stop" in low or "estop" in low:
        return "the robot is in emergency stop"
    if "did not finish within" in low or "did not reach" in low or "within the timeout" in low:
        return "it took too long"
    if "not connected" in low or "does not answer" in low:
        return "the robot is not connected"
    if "cut short" in low:
        return "it was cut short"
    reason = re.split(r"[;(\n]", message, maxsplit=1)[0].strip().rstrip(".:")
    return (reason[:100] or "something went wrong").rstrip()


def canned(planner: object, not_caught: str) -> list[str]:
    """What the robot says often in the same words, to synthesize at start-up: ``not_caught``
    ("Sorry, I didn't catch that.") and the planner's fixed answers, when it can say them without
    being asked (the rule planner: one question of each kind its understanding answers). An LLM
    is never asked."""
    texts = [not_caught]
    if not isinstance(planner, Understands):
        return texts
    understanding = planner.understanding
    from anima.agent.understanding.talk import QUESTIONS

    for phrases in QUESTIONS.values():
        try:
            understood = understanding(phrases[0])
        except Exception:  # a planner that cannot answer now answers later
            log.debug("no canned answer to %r", phrases[0], exc_info=True)
            continue
        response = understood.response
        if understood.kind == "answer" and response not in texts:
            texts.append(speakable(response))
    return texts


def say_reply(
    execute: Callable[[cmd.Speak], object], text: str, locale: str, notice: Callable[[str], None]
) -> None:
    """Speak a planner's reply through ``execute`` (the runtime's); one whose gesture markers
    are refused (a name the library lacks, a malformed marker) is said without them, with a
    notice, rather than not at all."""
    try:
        execute(cmd.Speak(text=text, locale=locale))
    except InvalidCommandError as exc:
        said = markup.plain(text)
        if said == text or not said:
            raise
        notice(f"the reply's gestures are left out: {exc}")
        execute(cmd.Speak(text=said, locale=locale))
