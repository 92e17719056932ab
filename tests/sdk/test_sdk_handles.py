"""HandleBook: the robot's reports paired with the handles waiting for them, in any order."""

from __future__ import annotations

import pytest

from anima.errors import CommandRejectedByRobotError, RobotNotConnectedError, RobotTimeoutError
from anima.sdk.handles import AnimationHandle, Handle, HandleBook, SpeechHandle

pytestmark = pytest.mark.fast

cancelled: list[str] = []


def speech(text: str, utterance: str = "") -> SpeechHandle:
    return SpeechHandle(text, lambda: cancelled.append(text), 1.0, utterance=utterance)


def test_an_end_that_arrives_before_its_handle_is_remembered() -> None:
    book = HandleBook()
    book.speech_ended("u1", "done")
    handle = speech("hi", "u1")
    book.add_speech(handle)
    assert handle.wait(0) == "done"


def test_start_speak_pairs_the_first_waiting_handle_with_that_text() -> None:
    book = HandleBook()
    a, b, c = speech("hello"), speech("bye"), speech("hello")
    for h in (a, b, c):
        book.add_speech(h)
    book.speech_started("u7", "hello")
    book.speech_started("u8", "hello")
    assert (a.utterance, b.utterance, c.utterance) == ("u7", "", "u8")
    book.speech_ended("u8", "stopped")
    assert c.reason == "stopped"
    assert not a.done


def test_animations_end_in_order_per_name_and_a_handle_ends_once() -> None:
    book = HandleBook()
    first = AnimationHandle("nod", lambda: None, 1.0)
    second = AnimationHandle("nod", lambda: None, 1.0)
    book.add_animation(first)
    book.add_animation(second)
    book.animation_ended("shake", "done")
    book.animation_ended("nod", "cleared")
    assert (first.reason, second.done) == ("cleared", False)
    first.finish("done")  # a second end is ignored
    assert first.reason == "cleared"


def test_a_refusal_fails_the_handle_it_belongs_to() -> None:
    book = HandleBook()
    handle = AnimationHandle("nodd", lambda: None, 1.0)
    handle.payload = "nodd"
    book.add_animation(handle)
    error = CommandRejectedByRobotError("nadine/agent/control/animation", "unknown animation")
    book.refused(AnimationHandle, lambda h: h.payload == "nodd", error)
    with pytest.raises(CommandRejectedByRobotError, match="unknown animation") as info:
        handle.wait(0)
    assert info.value.reason == "unknown animation"


def test_closing_fails_what_still_waits_and_cancel_only_runs_while_running() -> None:
    book = HandleBook()
    handle = speech("still talking", "u3")
    book.add_speech(handle)
    with pytest.raises(RobotTimeoutError):
        handle.wait(0.01)
    handle.cancel()
    assert cancelled[-1] == "still talking"
    book.close(RobotNotConnectedError("gone"))
    with pytest.raises(RobotNotConnectedError):
        handle.wait(0)
    count = len(cancelled)
    handle.cancel()
    assert len(cancelled) == count
    assert isinstance(handle, Handle)
