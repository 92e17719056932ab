"""The turn toward a new speaker (issue 32): a simulated room's array, the voice-direction
estimator and attention on the engine, on fake time — the bench's run, once."""

from __future__ import annotations

import pytest

from anima.bench.attention.speaker import TARGET_MS, report_lines, run_speaker_turn

pytestmark = pytest.mark.model


def test_attention_turns_to_a_second_speaker_soon_after_they_start() -> None:
    turn = run_speaker_turn(-40.0, 50.0, after_s=1.5)
    assert turn.aimed_ms is not None, "attention never aimed at the second speaker"
    assert turn.aimed_ms <= TARGET_MS  # measured 95-125 ms here
    assert turn.gazed_ms is not None  # and the head and eyes got there within 1.5 s
    assert turn.gazed_ms >= turn.aimed_ms
    assert "+50° (4-mic line): aimed" in report_lines([turn])[1]
