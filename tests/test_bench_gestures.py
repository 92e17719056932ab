"""`anima bench gestures` measures what it names: one lateness per sentence, from the word's
onset on the playback clock to the gesture's first move (loose bounds: wall-clock timing is the
bench's to report, not the test's to assert)."""

from __future__ import annotations

import math

import pytest
from typer.testing import CliRunner

from anima.bench.speech.gestures import run_gesture_bench
from anima.cli import app
from anima.testing.tts import ScriptedEngine

pytestmark = pytest.mark.integration


def test_each_sentence_gives_one_lateness_near_its_word() -> None:
    figures = run_gesture_bench(ScriptedEngine(), rounds=1, sentences=2)
    assert len(figures.lateness_ms) == 2
    assert all(math.isfinite(x) and -5 < x < 250 for x in figures.lateness_ms)
    assert figures.ticks > 100


def test_the_command_prints_its_figures_per_engine() -> None:
    result = CliRunner().invoke(
        app, ["bench", "gestures", "--rounds", "1", "--sentences", "2", "--engines", "espeak"]
    )
    assert result.exit_code == 0, result.output
    assert "espeak  gesture start − word onset over 2: p50" in result.output
    assert "within one tick" in result.output
