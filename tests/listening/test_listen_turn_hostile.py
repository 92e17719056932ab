"""Turn detectors against what a recognizer or a sound card may hand them: huge or strange
partials, full-scale and DC frames, clipped noise, NaN probabilities — no exception, a sane
decision, bounded work."""

from __future__ import annotations

import math
import time

import numpy as np
import pytest

from anima.audio import FRAME_SAMPLES
from anima.listening.turn.cues import CuesTurn
from anima.listening.turn.prosody import ProsodyTracker, pitch
from anima.listening.turn.text import TextCue, text_cue

pytestmark = pytest.mark.fast


def test_a_huge_partial_is_read_by_its_end_only() -> None:
    long = "wave " * 200_000 + "and"  # 1 MB of partial
    t0 = time.perf_counter()
    assert text_cue(long) is TextCue.OPEN
    assert text_cue(long[:-4]) is TextCue.COMPLETE
    assert time.perf_counter() - t0 < 0.5  # the tail, not the megabyte (loose: any machine)
    assert text_cue("x" * 10_000) is TextCue.COMPLETE  # one endless "word": complete, no error


@pytest.mark.parametrize(
    "text", ["\x00\x01 and \u202e", "🤖 " * 50 + "the", "AND", "and.", "…then…", "\ud800 um"]
)
def test_strange_partials_still_read_their_last_word(text: str) -> None:
    assert text_cue(text) is TextCue.OPEN


@pytest.mark.parametrize(
    "frame",
    [
        np.full(FRAME_SAMPLES, 32767, np.int16),  # DC at full scale
        np.full(FRAME_SAMPLES, -32768, np.int16),
        np.tile(np.array([32767, -32768], np.int16), FRAME_SAMPLES // 2),  # Nyquist square
        np.where(np.arange(FRAME_SAMPLES) % 160 < 80, 32767, -32768).astype(np.int16),  # 100 Hz
        (np.random.default_rng(2).standard_normal(FRAME_SAMPLES) * 40000)
        .clip(-32768, 32767)
        .astype(np.int16),
    ],
)
def test_extreme_frames_give_a_pitch_or_none(frame: np.ndarray) -> None:
    f0, dip = pitch(frame)
    assert f0 is None or 70 <= f0 <= 400
    assert math.isfinite(dip)
    tracker = ProsodyTracker()
    for _ in range(30):
        tracker.feed(frame)
    ending = tracker.ending()
    assert ending is None or math.isfinite(ending.end_st)


def test_nan_and_out_of_range_probabilities_do_not_break_a_decision() -> None:
    turn = CuesTurn()
    frame = np.where(np.arange(FRAME_SAMPLES) % 160 < 80, 8000, -8000).astype(np.int16)
    for p in [math.nan, -1.0, 2.0, math.inf, 0.9] * 10:
        turn.frame(frame, p)
    turn.partial("")
    decision = turn.decide()
    assert decision.silence_s in {turn.quick_s, turn.middle_s, turn.hold_s}
    assert isinstance(turn.ended(0.1), bool)


def test_an_endless_utterance_keeps_bounded_history() -> None:
    tracker = ProsodyTracker()
    frame = np.where(np.arange(FRAME_SAMPLES) % 160 < 80, 8000, -8000).astype(np.int16)
    for _ in range(2000):  # 64 s: longer than any utterance the recorder lets through
        tracker.feed(frame)
    assert len(tracker._semitones) <= 15 / 0.032 + 1
