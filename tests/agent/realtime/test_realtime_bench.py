"""Tier: integration (a runtime on the real clock, the scripted server on 127.0.0.1).

`anima bench realtime --quick` runs one trial of each figure and prints every line with a
figure measured (the figures against their targets are the benchmark's business, not this
test's)."""

from __future__ import annotations

import re

import pytest
from typer.testing import CliRunner

from anima.cli import app

pytestmark = pytest.mark.integration

LINES = (
    "tool call → first moving frame",
    "nod executed directly → frame",
    "first audio delta → first sample",
    "lips against the audio",
    "barge-in, stop word",
    "barge-in, stop word, turn",
    "barge-in, held voice",
    "voice onset → cut (the rule)",
    "the rule's evidence → cut",
    "audio_end_ms − sink's played",
    "barge-in, backchannel",
    "paused until it resumed",
    "barge-in, echo",
    "the loop while streaming both ways",
    "gemini barge-in, stop word",
    "its transcript sent → cut",
    "gemini barge-in, held voice",
    "gemini barge-in, backchannel",
    "gemini barge-in, echo",
    "the loop while Gemini streams",
)


def test_bench_realtime_quick_prints_every_figure_measured() -> None:
    result = CliRunner().invoke(app, ["bench", "realtime", "--quick"])
    assert result.exit_code == 0, result.output
    out = result.output
    for line in LINES:
        assert line in out, out
    assert "not measured" not in out, out
    assert len(re.findall(r"p95 -?\d+\.\d ms", out)) == 27, out  # every timed figure
    # the robot's voice yields at the onset (anima's VAD hears the microphone)
    assert re.search(r"stopped 1 of 1, paused at the onset 1.*; voice onset → playback", out), out
    assert re.search(r"backchannel\s+: stopped the robot \d of 1 \(target 0\); paused 1", out)
    # the echo's burst: a false onset, resumed
    assert re.search(r"echo\s+: stopped the robot 0 of 1 \(target 0\); paused 1; 1 false", out)
    assert re.search(r"\d+ missed of \d+ ticks", out), out
    # Gemini: the answer sent whole, so only anima's rules stop the robot (no interrupted)
    assert re.search(r"gemini barge-in, stop word\s+: stopped 1 of 1, paused at the onset 1", out)
    assert re.search(r"gemini barge-in, held voice\s+: stopped 1 of 1", out), out
    assert re.search(r"gemini barge-in, backchannel\s+: stopped the robot 0 of 1 \(target 0\)", out)
    assert re.search(r"gemini barge-in, echo\s+: stopped the robot 0 of 1 \(target 0\)", out)
    # the onset with the product's ears (Piper, Silero) is the full run's: said, not faked
    assert "yield onset with listen.vad's VAD: skipped with --quick" in out
