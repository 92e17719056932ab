"""Speech markers in a model's reply (issue 30, Minor): a marker cut off at the reply's end is
dropped, never said ("^sta…"), and the gestures one reply starts are bounded."""

from __future__ import annotations

import logging

import pytest

from anima.agent.actions import ActionRegistry
from anima.agent.conversation import Conversation
from anima.agent.executor import Executor
from anima.agent.gestures import MAX_REPLY_GESTURES, bounded_gestures
from anima.agent.planners.base import speakable
from anima.agent.planners.openai import OpenAIPlanner
from anima.agent.reply import ActionWords, Answer
from anima.events import SpeechStarted, Transcript
from anima.language import markup
from anima.runtime import Runtime
from anima.testing import eventually
from anima.testing.llm import Scripted, ScriptedOpenAIServer

from .conftest import Recorder

pytestmark = pytest.mark.integration


@pytest.mark.parametrize(
    "cut",
    ["^", "^sta", "^sta…", "^start(", "^start(LOOKUP_Wa", "^run(nod", "^start(LOOKUP_Waving…"],
)
def test_a_marker_cut_at_the_end_of_a_reply_is_dropped(cut: str) -> None:
    assert speakable(f"Sure, watch this! {cut}") == "Sure, watch this!"
    assert speakable(cut) == ""


def test_only_a_cut_marker_is_dropped() -> None:
    for kept in ("x^y", "2^10 is 1024", "Hi ^start(nod) there", "Hi ^start(nod)", "a ^hello"):
        assert speakable(kept) == kept
    # cut to the limit right inside a marker: the words before it, and the ellipsis
    cut = speakable("word " * 99 + "^start(LOOKUP_Waving)", 497)
    assert cut.endswith("word…")
    assert "^" not in cut


def test_a_streamed_reply_cut_inside_a_marker_is_said_without_it(
    runtime: Runtime, recorder: Recorder, server: ScriptedOpenAIServer, registry: ActionRegistry
) -> None:
    server.push(Scripted.stream_text("Hello there! ", "I am a robot. ^sta", gap_s=0.05))
    planner = OpenAIPlanner(registry, base_url=server.base_url, model="test", mode="tools")
    conv = Conversation(runtime, registry, planner, Executor(runtime))
    runtime.attach_agent(conv)
    try:
        conv.hear(Transcript(t=0.0, text="who are you?", final=True))
        said = lambda: [e.text for e in recorder.of("start_speak") if isinstance(e, SpeechStarted)]  # noqa: E731
        assert eventually(lambda: len(said()) == 2, timeout=10)
        assert said() == ["Hello there!", "I am a robot."]
    finally:
        conv.stop()


def test_bounded_gestures_keeps_the_first_and_their_stops() -> None:
    text, kept, dropped = bounded_gestures("A ^start(nod) b ^start(x) c ^stop(x) d ^wait(nod) e", 1)
    assert (text, kept, dropped) == ("A ^start(nod) b c d ^wait(nod) e", 1, 2)
    markup.parse(text)  # still well formed: no ^stop of a start that was dropped
    assert bounded_gestures("no markers", 0) == ("no markers", 0, 0)


def test_a_reply_starts_at_most_the_documented_number_of_gestures(
    registry: ActionRegistry, executor: Executor, caplog: pytest.LogCaptureFixture
) -> None:
    said: list[str] = []

    def speak(text: str) -> bool:
        said.append(text)
        return True

    answer = Answer(registry, executor, ActionWords(registry), speak=speak, current=lambda: True)
    with caplog.at_level(logging.WARNING, logger="anima.agent.gestures"):
        answer.take([], "Hi! " + "^run(LOOKUP_Waving) " * 24 + "Bye.")
        answer.words("And ^start(nod) again ^run(shake).")  # the same reply: nothing left
    runs = sum(markup.parse(t).segments.__len__() - 1 for t in said)
    assert runs == MAX_REPLY_GESTURES == 4
    assert said[0] == "Hi! " + "^run(LOOKUP_Waving) " * 4 + "Bye."
    assert said[1] == "And again."
    assert "20 gesture markers dropped" in caplog.text
    assert "2 gesture markers dropped" in caplog.text


def test_a_plans_say_steps_start_at_most_the_documented_number_of_gestures(
    registry: ActionRegistry, executor: Executor, caplog: pytest.LogCaptureFixture
) -> None:
    from anima.agent.plan import parse_plan

    marks = "^start(blink) " * 3  # blink: an idle layer, no hold
    plan = parse_plan(registry, [f"say(text='{marks}a')", f"say(text='{marks}b')"])
    with caplog.at_level(logging.WARNING, logger="anima.agent.gestures"):
        result = executor.start(plan).join(20)
    assert result is not None
    assert [s.status.value for s in result.steps] == ["succeeded", "succeeded"]
    # the first step starts 3, the second only 1 more: 2 of its markers dropped
    assert "say: 2 gesture markers dropped (at most 4 a reply)" in caplog.text
    assert caplog.text.count("gesture markers dropped") == 1
