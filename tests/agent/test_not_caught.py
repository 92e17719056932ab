"""What the agent says when it can't (issue 30 item 5): words heard well but asking for a
gesture the body lacks are answered with what it can do; "Sorry, I didn't catch that." is for
words heard with too little confidence only, and a typed ``ask`` is never "not caught"."""

from __future__ import annotations

import pytest

from anima import commands as cmd
from anima.agent.actions import ActionRegistry
from anima.agent.conversation import NOT_CAUGHT, Conversation
from anima.agent.executor import Executor
from anima.agent.planners.rules import RulePlanner
from anima.agent.understanding import understand
from anima.agent.vocabulary import vocabulary_registry
from anima.animation.library import AnimationLibrary, shipped_folder
from anima.behaviour.vocabulary import Vocabulary
from anima.config import BehaviourConfig
from anima.events import SpeechStarted, Transcript
from anima.runtime import Runtime
from anima.testing import eventually

from .conftest import Recorder

pytestmark = pytest.mark.fast

REACHY_CAN = "I can nod, shake my head, look around and say things."


@pytest.fixture(scope="module")
def reachy() -> ActionRegistry:
    """The agent's registry for Reachy Mini's starter library (no wave, no bow, no smile)."""
    lib = AnimationLibrary([shipped_folder("reachy_mini")], channel_count=200)
    lib.load()
    return vocabulary_registry(Vocabulary.of(lib, BehaviourConfig()))


@pytest.mark.parametrize(
    ("heard", "said"),
    [
        ("could you wave at me?", "Sorry, I can't wave at you."),
        ("please wave", "Sorry, I can't wave."),
        ("can you bow", "Sorry, I can't bow."),
        ("smile for me", "Sorry, I can't smile."),
        ("point to the left", "Sorry, I can't point to the left."),  # raised ValueError before
    ],
)
def test_a_gesture_the_body_lacks_is_answered_with_what_it_can_do(
    reachy: ActionRegistry, heard: str, said: str
) -> None:
    understood = understand(heard, reachy)
    assert understood.kind == "refuse"
    assert understood.response == f"{said} {REACHY_CAN}"


def test_words_not_understood_say_so_and_what_it_can_do(reachy: ActionRegistry) -> None:
    understood = understand("blorp zing", reachy)
    assert understood.kind == "not_understood"
    assert understood.response == f"Sorry, I didn't understand “blorp zing”. {REACHY_CAN}"


def _said(recorder: Recorder) -> list[str]:
    return [e.text for e in recorder.of("start_speak") if isinstance(e, SpeechStarted)]


def test_a_typed_ask_is_answered_never_not_caught(
    runtime: Runtime, recorder: Recorder, reachy: ActionRegistry
) -> None:
    conv = Conversation(runtime, reachy, RulePlanner(reachy), Executor(runtime))
    runtime.attach_agent(conv)

    def answered(count: int) -> None:
        assert eventually(lambda: len(_said(recorder)) == count, timeout=5)
        runtime.execute(cmd.StopSpeaking())  # no need to hear it all
        assert eventually(lambda: not runtime.speaking and conv.phase != "thinking", timeout=5)

    try:
        runtime.execute(cmd.Ask(text="could you wave at me?"))
        answered(1)
        runtime.execute(cmd.Ask(text="blorp zing"))
        answered(2)
        # heard with too little confidence: the one case for "didn't catch that"
        conv.hear(Transcript(t=0.0, text="wave", final=True, confidence=0.05))
        answered(3)
    finally:
        runtime.detach_agent()
    assert _said(recorder) == [
        f"Sorry, I can't wave at you. {REACHY_CAN}",
        f"Sorry, I didn't understand “blorp zing”. {REACHY_CAN}",
        NOT_CAUGHT,
    ]
