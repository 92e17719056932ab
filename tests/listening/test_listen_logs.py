"""What the terminal shows of listening (issue 30: nothing said what the robot heard): the
final transcript with its confidence, a round that ended with nothing to act on, and text from
outside escaped so it cannot forge a log line or drive a terminal."""

from __future__ import annotations

import logging
import threading

import numpy as np
import pytest

from anima.audio import SAMPLE_RATE
from anima.listening import ListenConfig, Listener, PushSource, RoundReport
from anima.logtext import quoted
from anima.testing.listening import FakeRecognizer, FakeVad

pytestmark = pytest.mark.fast

LOUD = np.full(SAMPLE_RATE // 2, 5000, dtype=np.int16)


@pytest.fixture(autouse=True)
def _listen_extra() -> None:
    """Overrides the folder's: these tests need no model."""


def _round(caplog: pytest.LogCaptureFixture, recognizer: FakeRecognizer, audio: bool) -> str:
    done = threading.Event()
    source = PushSource()
    listener = Listener(
        source, config=ListenConfig(wake_word=False, turn="silence", no_speech_timeout_s=0.5),
        recognizer=recognizer, vad=FakeVad(),
        results=lambda r: done.set() if isinstance(r, RoundReport) else None,
    )  # fmt: skip
    with caplog.at_level(logging.INFO, logger="anima.listening"), listener:
        listener.wake()
        source.push_silence(0.1)
        if audio:
            source.push(LOUD)
        source.push_silence(1.5)
        assert done.wait(5)
    return caplog.text


def test_the_final_transcript_is_logged_with_its_confidence(
    caplog: pytest.LogCaptureFixture,
) -> None:
    text = _round(caplog, FakeRecognizer(["wave"], confidence=0.93), audio=True)
    assert "heard: 'wave' (confidence 0.93)" in text


def test_a_transcript_from_outside_is_escaped(caplog: pytest.LogCaptureFixture) -> None:
    """A recognizer (or a file it was fed) gives a newline and an ESC sequence: one line, the
    control characters shown as escapes, none raw."""
    forged = "wave\n2026-01-01 00:00:00 ERROR forged line \x1b]52;c;aGk=\x07\u202e"
    text = _round(caplog, FakeRecognizer([forged], confidence=None), audio=True)
    (line,) = [r.getMessage() for r in caplog.records if r.getMessage().startswith("heard: ")]
    assert line == "heard: " + quoted(forged)
    assert "\\n2026" in line
    assert "\\x1b]52" in line
    assert "\\u202e" in line
    assert not any(c in line for c in "\n\x1b\x07\u202e")
    assert "(confidence" not in text  # a recognizer without one


def test_a_round_with_nothing_to_act_on_says_why(caplog: pytest.LogCaptureFixture) -> None:
    text = _round(caplog, FakeRecognizer(["wave"]), audio=False)
    assert "heard nothing to act on (no_speech after 0.5 s)" in text


def test_quoted_cuts_long_text() -> None:
    assert quoted("x" * 200, limit=5) == "'xxxxx'…"
    assert quoted("it's") == '"it\'s"'
