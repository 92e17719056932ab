"""`anima bench wake` and `anima bench turn`: the commands run their benchmarks and print figures
(small budgets: the figures themselves are the benchmarks' business)."""

from __future__ import annotations

import re

import pytest
from typer.testing import CliRunner

from anima.cli import app

pytestmark = pytest.mark.model


def test_bench_wake_prints_hits_and_an_hours_rate_of_false_wakes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The smallest budget (1 s) and the least talk that prints a figure (0.1 min). Piper is
    left out: a run this short never reaches its voices (the cases give every eSpeak voice its
    turn first, and 0.1 min of talk is a few eSpeak sentences), and loading it, once for the
    wake bench and once for the talk, was 3 of this test's 5 s of CPU."""
    from anima.bench.wake import wake

    monkeypatch.setattr(wake, "piper_voices", list)
    args = ["bench", "wake", "--spotter", "keyphrase", "--max-seconds", "1"]
    result = CliRunner().invoke(app, [*args, "--talk-minutes", "0.1"])
    assert result.exit_code == 0, result.output
    assert re.search(r"wake spotter keyphrase: [\d.]+% hits over \d+ utterances", result.output)
    assert re.search(r"false wakes \(keyphrase\): \d+ in 0\.[1-9] min of talk", result.output)


def test_bench_wake_refuses_an_unknown_spotter() -> None:
    result = CliRunner().invoke(app, ["bench", "wake", "--spotter", "porcupine"])
    assert result.exit_code == 2
    assert "asr or keyphrase" in result.output


def test_bench_turn_prints_delay_and_cut_offs_per_detector() -> None:
    result = CliRunner().invoke(app, ["bench", "turn", "--budget-seconds", "3"])
    assert result.exit_code == 0, result.output
    assert re.search(
        r"silence\s+\S+\s+delay p50\s+\d+ ms p95\s+\d+ ms\s+cut \d+/\d+", result.output
    )
    # the early reply of full duplex: when the reply begins, and how often it is taken back
    assert re.search(r"reply p50\s+\d+ ms p95\s+\d+ ms\s+taken back \d+/\d+", result.output)


def test_bench_conversation_duplex_runs_the_robot_in_full_duplex(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``--duplex`` is ``listen.duplex: true`` over the defaults (or the ``-c`` file)."""
    from anima.bench.conversation import conversation

    seen = []

    def run(options: object) -> None:
        seen.append(options)
        raise SystemExit(0)

    monkeypatch.setattr(conversation, "run_conversation_bench", run)
    CliRunner().invoke(app, ["bench", "conversation", "--duplex"])
    CliRunner().invoke(app, ["bench", "conversation"])
    duplex, half = (getattr(o, "config", None) for o in seen)
    assert duplex is not None
    assert duplex.listen.duplex
    assert duplex.listen.turn_early_s == 0.25
    assert half is None  # the defaults: half duplex


def test_bench_duplex_refuses_an_unknown_set_and_a_confidence_out_of_range() -> None:
    """Refused before anything loads: the sets are named, the bounds are the config's."""
    result = CliRunner().invoke(app, ["bench", "duplex", "--split", "dev,tuesday"])
    assert result.exit_code == 2
    assert "tuesday" in result.output
    assert "blind" in result.output  # the known sets are listed
    result = CliRunner().invoke(app, ["bench", "duplex", "--barge-in-confidence", "1.5"])
    assert result.exit_code == 2
    assert "--barge-in-confidence" in result.output
