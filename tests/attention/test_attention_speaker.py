"""The turn toward a new speaker (issue 32): a simulated room's array, the voice-direction
estimator and attention on the engine, on fake time — the bench's runs, a few of them."""

from __future__ import annotations

import pytest

from anima.bench.attention.speaker import TARGET_MS, report_lines, run_speaker_turn

pytestmark = pytest.mark.model


def test_attention_turns_to_a_second_speaker_soon_after_they_start() -> None:
    turn = run_speaker_turn(-40.0, 50.0, after_s=1.5)
    assert turn.aimed_ms is not None, "attention never aimed at the second speaker"
    assert turn.aimed_ms <= TARGET_MS  # measured 95-445 ms here
    assert turn.gazed_ms is not None  # and the head and eyes got there within 1.5 s
    assert turn.gazed_ms >= turn.aimed_ms
    assert "dev: -40° then +50° (4-mic line): aimed" in report_lines([turn])[1]


def test_a_line_on_the_head_turns_toward_a_talker_near_its_end() -> None:
    """Reachy Mini's line of microphones, on its head: a talker at 70° is near the line's end,
    where a fixed line hears them short (~45°); on the head, the line turns with the head
    toward them and its directions are turned back by the head's pose (measured 415 ms; 925 ms
    before the estimator summed its onsets and the head's turn was compensated)."""
    turn = run_speaker_turn(0.0, 70.0, mount="head", after_s=1.2)
    assert turn.aimed_ms is not None, "attention never aimed within 15° of the talker"
    assert turn.aimed_ms <= TARGET_MS
    assert "(4-mic line on the head): aimed" in report_lines([turn])[1]
