"""Issue 14: a fast slice of `anima bench duplex` — the real canceller, Silero VAD and Whisper in
the simulated room: the robot alone is never interrupted, "wait, look at me" stops it."""

from __future__ import annotations

import importlib.util

import pytest

from anima.audio import SAMPLE_RATE
from anima.bench.conversation.audio import Speaker
from anima.bench.duplex.duplex import DuplexResult, _run_trial, report
from anima.bench.duplex.sets import REPLY, ROOMS, Trial
from anima.config.listening import ListenConfig
from anima.listening.echo.canceller import make_echo
from anima.listening.makers import make_recognizer
from anima.listening.registry import whisper_installed

# the reply's first sentence (4 s): the bench says the whole reply (10 s), in both rooms
REPLY_START = REPLY[: REPLY.index("around.") + len("around.")]
LOOP_S = 0.5  # the talk measured (the bench's --loop-seconds; its own start-up is added)

pytestmark = [
    pytest.mark.model,
    pytest.mark.skipif(
        not whisper_installed()
        or any(importlib.util.find_spec(m) is None for m in ("livekit", "piper")),
        reason="needs the duplex, listen and speech extras",
    ),
]


def test_the_robot_alone_is_not_interrupted_and_a_request_over_it_stops_it() -> None:
    speaker = Speaker()
    cfg = ListenConfig(duplex=True, wake_word=False)
    recognizer = make_recognizer(cfg, phrases=("stop", "wait", "look at me"))
    recognizer.load()
    robot = speaker.say("piper-joe", REPLY_START)
    path = ROOMS["dev"][0]
    result = DuplexResult()
    alone = Trial(robot, path, None, 0, "alone", "alone")
    said = speaker.say("espeak-us", "wait, look at me")
    over = Trial(robot, path, said, 2 * SAMPLE_RATE, "interruption", "wait")
    for trial in (alone, over):
        _run_trial(trial, make_echo("webrtc"), cfg, recognizer, result)
    assert result.false_barge_ins == 0, report({"slice": result})
    assert result.false_stops == 0
    assert result.erle_aec[0] > 20  # the canceller's own figure, after its first second
    assert result.missed == [], report({"slice": result})
    assert len(result.detect_ms) == 1
    assert result.detect_ms[0] < 600  # heard within a few frames of the first word


def test_the_loop_measure_runs_the_canceller_only_in_full_duplex() -> None:
    """`anima bench duplex --loop-seconds`: the same talk half and full duplex; only the full
    duplex run sends microphone frames through the canceller (the figures are the bench's)."""
    from anima.bench.duplex.loop import loop_while_talking

    half, full = loop_while_talking(False, LOOP_S), loop_while_talking(True, LOOP_S)
    assert half.frames_cleaned == 0
    assert full.frames_cleaned > LOOP_S / 0.032  # every microphone frame, start-up and talk
    for run in (half, full):
        assert run.rate_hz > 0
        assert run.late_max_ms >= run.late_p99_ms >= run.late_p50_ms >= 0
        assert "Hz" in run.line()
