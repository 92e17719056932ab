"""The early reply of full duplex (``listen.turn_early_s``): begun at a pause that may end the
turn, confirmed by the final, taken back when the person goes on — on the simulated robot, the
rule planner, autojump fake time; the listener's results given by hand (``Conversation.take``),
as the listener sends them."""

from __future__ import annotations

import pytest

from anima.agent.conversation import NOT_CAUGHT, Conversation
from anima.events import (
    ActionStatus,
    Notice,
    PlanFinished,
    PlanStarted,
    SpeechEnded,
    SpeechStarted,
    Transcript,
)
from anima.listening.results import EarlyTranscript, TurnResumed
from anima.runtime import Runtime

from .conftest import Recorder
from .conftest import started_conversation as _conversation

pytestmark = pytest.mark.integration


def early(conv: Conversation, text: str) -> None:
    conv.take(EarlyTranscript(t=1.0, text=text, confidence=0.9))


def final(conv: Conversation, text: str) -> None:
    conv.take(Transcript(t=2.0, text=text, final=True, confidence=0.9))


def ran(recorder: Recorder, action: str, since: int) -> list[str]:
    """The statuses of ``action``'s steps published since ``since``."""
    return [
        e.status for e in recorder.of(ActionStatus, since=since)
        if e.step.startswith(action)
    ]  # fmt: skip


def test_an_early_reply_speaks_at_once_and_moves_only_once_the_final_confirms_it(
    runtime: Runtime, recorder: Recorder
) -> None:
    conv = _conversation(runtime)
    try:
        mark = recorder.mark()
        early(conv, "say hello and nod")
        said = recorder.wait_for(SpeechStarted, since=mark)
        assert said.text == "Hello!"  # the words before the turn is known to be over
        recorder.wait_for(lambda e: isinstance(e, ActionStatus) and e.step.startswith("say")
                          and e.status == "succeeded", since=mark)  # fmt: skip
        assert ran(recorder, "play_animation", mark) == []  # the nod waits for the final
        final(conv, "Say hello and nod.")  # the same words (case and punctuation aside)
        done = recorder.wait_for(PlanFinished, since=mark)
        assert done.outcome == "succeeded"
        assert ran(recorder, "play_animation", mark) == ["running", "succeeded"]
        assert len(recorder.of(PlanStarted, since=mark)) == 1  # planned once, not again
        assert len(recorder.of(SpeechStarted, since=mark)) == 1  # "Hello!" said once
        assert (conv.early_replies, conv.taken_back) == (1, 0)
        assert conv.spoken.take() == ["person: say hello and nod", "robot: Hello!"]
    finally:
        conv.stop()


def test_the_person_going_on_takes_the_early_reply_back_and_the_whole_request_is_planned(
    runtime: Runtime, recorder: Recorder
) -> None:
    conv = _conversation(runtime)
    try:
        final(conv, "nod")  # a turn before: "do it again" repeats it
        recorder.wait_for(PlanFinished)
        mark = recorder.mark()
        conv.spoken.take()
        early(conv, "say hi and wave")  # "… at the children": the person pauses after "wave"
        recorder.wait_for(SpeechStarted, since=mark)
        conv.take(TurnResumed(t=1.5))
        taken = recorder.wait_for(PlanFinished, since=mark)
        assert taken.outcome == "interrupted"
        assert ran(recorder, "play_animation", mark) == ["canceled"]  # the wave never ran
        assert conv.taken_back == 1
        assert conv.spoken.take() == []  # neither the request nor the words taken back
        again = recorder.mark()
        final(conv, "do it again")  # the request taken back was forgotten: the nod again
        planned = recorder.wait_for(PlanStarted, since=again)
        assert planned.steps == ("play_animation(name='nod')",)
        assert recorder.wait_for(PlanFinished, since=again).outcome == "succeeded"
    finally:
        conv.stop()


def test_a_final_with_other_words_takes_the_early_reply_back_and_is_planned(
    runtime: Runtime, recorder: Recorder
) -> None:
    conv = _conversation(runtime)
    try:
        mark = recorder.mark()
        early(conv, "wave")
        recorder.wait_for(PlanStarted, since=mark)
        final(conv, "nod")  # the final decode read the pause's audio otherwise
        plans = [recorder.wait_for(PlanFinished, since=mark, count=n) for n in (1, 2)]
        assert [p.outcome for p in plans] == ["interrupted", "succeeded"]
        started = recorder.of(PlanStarted, since=mark)
        assert [s.steps for s in started] == [
            ("play_animation(name='LOOKUP_Waving')",),
            ("play_animation(name='nod')",),
        ]
        assert ran(recorder, "play_animation(name='LOOKUP", mark) == ["canceled"]
        assert conv.taken_back == 1
    finally:
        conv.stop()


def test_a_wake_after_an_early_reply_drops_it(runtime: Runtime, recorder: Recorder) -> None:
    from anima.events import WakeDetected

    conv = _conversation(runtime)
    try:
        mark = recorder.mark()
        early(conv, "wave")
        recorder.wait_for(PlanStarted, since=mark)
        conv.take(WakeDetected(t=1.5, source="keyphrase", phrase="hey robot"))
        assert recorder.wait_for(PlanFinished, since=mark).outcome == "interrupted"
        final(conv, "wave")  # the new round's final: an ordinary request, planned anew
        assert recorder.wait_for(PlanFinished, since=mark, count=2).outcome == "succeeded"
        assert ran(recorder, "play_animation", mark) == ["canceled", "running", "succeeded"]
    finally:
        conv.stop()


def unsure(conv: Conversation, text: str, final: bool, confidence: float) -> None:
    """``text`` heard with ``confidence``: the early reading at the pause, or the final."""
    if final:
        conv.take(Transcript(t=2.0, text=text, final=True, confidence=confidence))
    else:
        conv.take(EarlyTranscript(t=1.0, text=text, confidence=confidence))


def test_words_heard_unsurely_begin_not_caught_early_and_a_final_as_unsure_confirms_it(
    runtime: Runtime, recorder: Recorder
) -> None:
    conv = _conversation(runtime)
    try:
        mark = recorder.mark()
        unsure(conv, "nod", final=False, confidence=0.1)  # under listen.min_confidence 0.2
        said = recorder.wait_for(SpeechStarted, since=mark)
        assert said.text == NOT_CAUGHT  # at the pause, as the final would say it
        unsure(conv, "Nod.", final=True, confidence=0.1)  # the same reading: it stands
        ended = recorder.wait_for(SpeechEnded, since=mark)
        assert ended.reason == "done"
        notices = [n.message for n in recorder.of(Notice, since=mark)]
        assert any(m.startswith("not acted on: heard 'Nod.'") for m in notices)
        assert len(recorder.of(SpeechStarted, since=mark)) == 1  # said once
        assert recorder.of(PlanStarted, since=mark) == []  # nothing planned
        assert (conv.early_replies, conv.taken_back) == (1, 0)
    finally:
        conv.stop()


def test_a_final_heard_surely_takes_back_an_unsure_early_reply_and_is_acted_on(
    runtime: Runtime, recorder: Recorder
) -> None:
    conv = _conversation(runtime)
    try:
        mark = recorder.mark()
        unsure(conv, "nod", final=False, confidence=0.1)
        recorder.wait_for(SpeechStarted, since=mark)
        unsure(conv, "nod", final=True, confidence=0.9)  # read again, surely: act on it
        assert recorder.wait_for(PlanFinished, since=mark).outcome == "succeeded"
        assert ran(recorder, "play_animation", mark) == ["running", "succeeded"]
        assert recorder.wait_for(SpeechEnded, since=mark).reason == "interrupted"
        assert conv.taken_back == 1
    finally:
        conv.stop()
