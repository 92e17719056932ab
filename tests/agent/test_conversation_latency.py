"""What the conversation does for a fast first reply: its fixed replies are synthesized at
start-up, and each turn notes when it was heard and when the planner answered (the conversation
bench's stages)."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest

from anima import commands as cmd
from anima.agent.conversation import NOT_CAUGHT
from anima.events import SpeechStarted
from anima.runtime import Runtime
from anima.testing import eventually
from anima.testing.tts import ScriptedEngine

from .conftest import Recorder, autojump_runtime, started_conversation

pytestmark = pytest.mark.fast


class PreparingEngine(ScriptedEngine):
    """The scripted voice with a cache's ``prepare``: notes what it was asked to prepare."""

    def __init__(self) -> None:
        super().__init__()
        self.prepared: list[str] = []
        self.lock = threading.Lock()

    def prepare(self, text: str, locale: str = "en-US") -> int:
        with self.lock:
            self.prepared.append(text)
        return 1


@pytest.fixture
def voice() -> PreparingEngine:
    return PreparingEngine()


@pytest.fixture
def runtime(voice: PreparingEngine) -> Iterator[Runtime]:
    """The runtime on autojump fake time, speaking with ``voice``."""
    with autojump_runtime(tts=[voice]) as rt:
        yield rt


def test_the_fixed_replies_are_prepared_at_start(runtime: Runtime, voice: PreparingEngine) -> None:
    conv = started_conversation(runtime)
    try:
        canned = conv.canned()
        assert canned[0] == NOT_CAUGHT
        assert "My name is Anima." in canned  # the rule planner's answer to "what is your name"
        assert any(t.startswith("I can ") for t in canned)  # … and to "what can you do"
        assert eventually(lambda: voice.prepared == canned, timeout=10.0)
    finally:
        conv.stop()


def test_a_planner_without_an_understanding_is_never_asked_ahead(runtime: Runtime) -> None:
    conv = started_conversation(runtime)
    real = conv.planner
    try:
        conv.planner = object()  # type: ignore[assignment]  # no `understanding`: an LLM's
        assert conv.canned() == [NOT_CAUGHT]
    finally:
        conv.planner = real
        conv.stop()


def test_each_turn_notes_when_it_was_heard_and_planned(runtime: Runtime) -> None:
    recorder = Recorder()
    runtime.events.subscribe(recorder)
    conv = started_conversation(runtime)
    try:
        runtime.execute(cmd.Ask(text="what is your name"))
        said = recorder.wait_for(lambda e: isinstance(e, SpeechStarted))
        assert isinstance(said, SpeechStarted)
        assert eventually(lambda: len(conv.timings) == 1)
        timing = conv.timings[0]
        assert timing.heard_t <= timing.planned_t <= said.t  # heard → planned → spoken
    finally:
        conv.stop()
