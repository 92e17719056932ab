"""`anima bench conversation`: the evaluation set, the judging rules, and a fast real slice.

The slice runs the real pipeline (runtime on the simulated robot, the configured agent, the
listener on pushed audio, eSpeak NG speaking) on two requests with a tiny set of our own: one
whose expectation is right and one whose expectation is deliberately wrong, so the harness is
seen to count what the robot really did — both ways.
"""

from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path

import pytest

from anima.agent.actions import ActionRegistry
from anima.bench.conversation.figures import figures, word_errors
from anima.bench.conversation.judge import Observed, judge, plan_matches, speech_kind
from anima.bench.conversation.report import report_lines
from anima.bench.conversation.requests import Request, default_set_dir, load_requests
from anima.build import build
from anima.config import AnimaConfig, MqttConfig
from anima.config.sections import HumanoidConfig
from anima.drivers.sim import SimDriver
from anima.errors import ConfigError
from anima.listening import ListenConfig
from anima.speech.sinks import NullSink
from anima.testing.tts import ScriptedEngine

pytestmark = pytest.mark.model

REQUIRED = {"gesture", "gaze", "speech", "multi_step", "humanoid", "question", "oov", "stop",
            "chitchat"}  # fmt: skip


@pytest.fixture(scope="module")
def registry() -> ActionRegistry:
    """The registry the bench judges against: the shipped animations and the humanoid's."""
    from anima.agent.vocabulary import robot_registry

    cfg = AnimaConfig(mqtt=MqttConfig(enabled=False), humanoid=HumanoidConfig(type="sim"))
    rt = build(cfg, doors=False, driver=SimDriver(), audio_sink=NullSink(), tts=[ScriptedEngine()])
    rt.library.load()
    return robot_registry(rt)


def test_the_shipped_set_is_big_enough_and_every_expected_plan_is_valid(
    registry: ActionRegistry,
) -> None:
    dev = load_requests(registry, "dev")
    heldout = load_requests(registry, "heldout")
    assert len(dev) >= 60
    assert len(heldout) >= 25
    assert {r.category for r in dev} >= REQUIRED
    assert {r.category for r in heldout} >= REQUIRED
    assert not {r.text.lower() for r in dev} & {r.text.lower() for r in heldout}
    header = (default_set_dir() / "heldout.yaml").read_text().split("requests:")[0]
    assert "MEASURE ONLY" in header
    # each expected plan came back canonical (parse_plan's own text)
    nod = next(r for r in dev if r.text == "give me a nod")
    assert nod.plans == (("play_animation(name='nod')",),)


def test_a_set_with_an_unknown_action_is_refused_naming_the_entry(
    tmp_path: Path, registry: ActionRegistry
) -> None:
    (tmp_path / "requests.yaml").write_text(
        "requests:\n"
        "  - {text: nod, category: gesture, expect: [\"play_animation(name='nod')\"]}\n"
        "  - {text: make a coffee, category: oov, expect: [\"brew(kind='latte')\"]}\n"
    )
    with pytest.raises(ConfigError, match=r"requests.yaml entry 2 \('make a coffee'\).*brew"):
        load_requests(registry, "dev", tmp_path)
    (tmp_path / "requests.yaml").write_text(
        "requests:\n  - {text: hi, category: chitchat, expect_kind: chat}\n"
    )
    with pytest.raises(ConfigError, match=r"entry 1.*expect_kind must be one of answer"):
        load_requests(registry, "dev", tmp_path)


def test_a_fifo_or_a_device_is_refused_not_read(tmp_path: Path, registry: ActionRegistry) -> None:
    os.mkfifo(tmp_path / "requests.yaml")  # nobody writes to it: reading would block forever
    with pytest.raises(ConfigError, match=r"requests.yaml: cannot read the evaluation set"):
        load_requests(registry, "dev", tmp_path)
    (tmp_path / "heldout.yaml").symlink_to("/dev/zero")
    with pytest.raises(ConfigError, match=r"heldout.yaml: cannot read the evaluation set"):
        load_requests(registry, "heldout", tmp_path)


def test_trials_cover_every_condition_and_weave_the_splits() -> None:
    from anima.bench.conversation.conversation import BenchOptions, plan_trials

    def reqs(split: str, n: int) -> list[Request]:
        return [Request(text=f"{split} {i}", category="gesture", split=split, kind="stop")  # type: ignore[arg-type]
                for i in range(n)]  # fmt: skip

    o = BenchOptions(voices=("a", "b"), noises=("clean", "white-25"), modes=("wake", "ptt"))
    trials = plan_trials({"dev": reqs("dev", 16), "heldout": reqs("heldout", 8)}, o)
    assert len(trials) == 24
    dev = [c for r, c in trials if r.split == "dev"]
    assert len(set(dev)) == 8  # 16 requests, 8 conditions: each twice
    first = {r.split for r, _ in trials[:6]}
    assert first == {"dev", "heldout"}  # a run cut short still has both
    full = plan_trials({"dev": reqs("dev", 3)}, dataclasses.replace(o, design="full"))
    assert len(full) == 3 * 8


@pytest.mark.parametrize(
    ("expected", "actual", "ok"),
    [
        (["play_animation(name='nod')"], ["play_animation(name='nod')"], True),
        (["play_animation(name='nod')"], ["play_animation(name='shake')"], False),
        (["play_animation(name='nod')"] * 2, ["play_animation(name='nod')"], False),
        (["look_at(x=1.0, y=0.6, z=0.0)"], ["look_at(x=1.0, y=0.5, z=0.05)"], True),
        (["look_at(x=1.0, y=0.6, z=0.0)"], ["look_at(x=1.0, y=-0.6, z=0.0)"], False),  # right
        (["look_at(x=1.0, y=0.6, z=0.0)"], ["look_at(x=1.0, y=0.6, z=0.5)"], False),  # and up
        (["say(text='hello')"], ["say(text='Hello there!')"], True),
        (["say(text='good night')"], ["say(text='Good morning!')"], False),
        (["walk_forward()"], ["walk_forward(seconds=0.5)"], True),  # "a bit": any amount
        (["walk_forward(seconds=2.0)"], ["walk_forward()"], True),  # the default is 2 s
        (["walk_forward(seconds=3.0)"], ["walk_forward()"], True),  # within a factor of two
        (["walk_forward(seconds=3.0)"], ["walk_forward(seconds=8.0)"], False),
        (["walk_forward()"], ["set_gait(mode='Walk')", "walk_forward()"], True),
        (["turn(direction='left')"], ["turn(direction='right')"], False),
    ],
)
def test_plans_match_by_the_documented_rules(
    registry: ActionRegistry, expected: list[str], actual: list[str], ok: bool
) -> None:
    assert plan_matches(expected, actual, registry) is ok


def test_what_the_robot_says_is_read_as_an_answer_a_refusal_or_not_understood() -> None:
    assert speech_kind("Sorry, I didn't catch that.") == "not_understood"
    assert speech_kind("I can't make coffee. I can wave, nod, look around.") == "refuse"
    assert speech_kind("Sorry, I can't do that: 'dance' is not something I know.") == "refuse"
    assert speech_kind("My name is Anima.") == "answer"


def test_verdicts_for_answers_refusals_and_stops(registry: ActionRegistry) -> None:
    def req(kind: str, words: tuple[str, ...] = ()) -> Request:
        return Request(text="x", category="question", split="dev", kind=kind, words=words)  # type: ignore[arg-type]

    named = Observed(spoken=["My name is Anima."])
    assert judge(req("answer", ("anima",)), named, registry).correct
    assert not judge(req("answer", ("wave",)), named, registry).correct  # not the words asked
    moved = Observed(spoken=["Sure."], plans=[("play_animation(name='nod')",)])
    assert judge(req("answer"), moved, registry).outcome == "moved"
    refused = Observed(spoken=["I can't make coffee."])
    assert judge(req("refuse"), refused, registry).correct
    assert not judge(req("answer"), refused, registry).correct
    assert not judge(req("refuse"), Observed(), registry).correct  # silence is no refusal
    assert judge(req("stop"), Observed(pre_cut=True, plans=[("stop()",)]), registry).correct
    assert not judge(req("stop"), Observed(pre_cut=False), registry).correct  # it kept waving
    assert not judge(req("act"), Observed(woke=False), registry).correct


def test_word_errors_count_substitutions_insertions_and_deletions() -> None:
    assert word_errors("walk forward for two seconds", "walk forward for 2 seconds") == 0
    assert word_errors("give me a nod", "give me nod") == 1
    assert word_errors("give me a nod", "get ready to walk") == 4
    assert word_errors("nod", "") == 1


@pytest.mark.serial  # asserts the loop rate (> 90 Hz)
def test_a_fast_real_slice_counts_what_the_robot_did(tmp_path: Path) -> None:
    pytest.importorskip("pocketsphinx", reason="needs the listen extra")
    from anima.bench.conversation.conversation import BenchOptions, run_conversation_bench

    (tmp_path / "requests.yaml").write_text(
        "requests:\n"
        "  - {text: nod your head, category: gesture, expect: [\"play_animation(name='nod')\"]}\n"
        "  # deliberately wrong: the robot will shake its head, which is not a nod\n"
        "  - {text: shake your head, category: gesture,"
        " expect: [\"play_animation(name='nod')\"]}\n"
        "  - {text: say goodbye, category: speech, expect: [\"say(text='Goodbye!')\"]}\n"
    )
    # pocketsphinx's grammar hears eSpeak's "nod your head" exactly: the subject is the harness
    config = AnimaConfig(listen=ListenConfig(asr="pocketsphinx"))
    options = BenchOptions(
        voices=("espeak-us",), noises=("clean",), modes=("ptt",), splits=("dev",),
        max_seconds=90.0, false_wake_s=0.0, set_dir=tmp_path, config=config,
    )  # fmt: skip
    r = run_conversation_bench(options)
    by_text = {t.text: t for t in r.trials}
    assert set(by_text) == {"nod your head", "shake your head", "say goodbye"}
    right, wrong = by_text["nod your head"], by_text["shake your head"]
    assert right.transcript == "nod your head"
    assert right.word_errors == 0
    assert right.correct, right
    assert right.first_motion_ms is not None
    assert 0 < right.first_motion_ms < 10_000
    assert not wrong.correct, wrong
    assert wrong.outcome == "wrong_action"
    assert "play_animation(name='shake')" in wrong.detail
    spoken = by_text["say goodbye"]
    assert spoken.correct, spoken
    assert spoken.first_audio_ms is not None
    stages = dataclasses.asdict(spoken.stages)
    assert all(v is not None and v >= 0 for v in stages.values()), stages
    # the stages split the first audio exactly: each from the moment before, the last the onset
    assert sum(stages.values()) == pytest.approx(spoken.first_audio_ms, abs=0.01)
    assert right.stages.turn_end is not None
    assert right.stages.speak is None
    overall = r.figures["dev"]["overall"]
    assert overall == figures(r.trials)
    assert overall.intent_accuracy == pytest.approx(2 / 3)
    assert overall.stages["chunk"].n == 1
    report = "\n".join(report_lines(r))
    assert "end of turn" in report
    assert "1st chunk" in report
    # "say goodbye" alone spoke, and its reply began with words
    assert "over 1 trials that spoke" in report
    assert "over the 1 whose reply began with words" in report
    assert r.loop_rate_hz > 90
    assert 0 <= r.loop_p99_ms <= r.loop_max_ms  # each tick's lateness over the trials
    assert "lateness p99" in report
    json.dumps(dataclasses.asdict(r))  # what --json prints


def test_text_trials_each_start_from_the_same_robot(tmp_path: Path) -> None:
    """Understanding alone (``--modes text``), and every trial from the same start: 'look to
    your left' right after 'look at the camera' failed ('a gaze target is latched') before the
    bench released the held gaze posture between trials."""
    from anima.bench.conversation.conversation import (
        BenchOptions,
        plan_trials,
        run_conversation_bench,
    )

    (tmp_path / "requests.yaml").write_text(
        "requests:\n"
        "  - {text: look at the camera, category: gaze,"
        " expect: [\"look_at_target(name='Posture_LookAtZoom')\"]}\n"
        "  - {text: look to your left, category: gaze, expect: ['look_at(x=1.0, y=0.6, z=0.0)']}\n"
    )
    base = BenchOptions(modes=("text",), splits=("dev",), set_dir=tmp_path, false_wake_s=0.0,
                        voices=("espeak-us",), max_seconds=60.0)  # fmt: skip
    requests = {"dev": [
        Request(text="look at the camera", category="gaze", split="dev", kind="stop"),
        Request(text="look to your left", category="gaze", split="dev", kind="stop"),
    ]}  # fmt: skip
    seed = next(  # an order with the camera first
        s for s in range(50)
        if plan_trials(requests, dataclasses.replace(base, seed=s))[0][0].text.endswith("camera")
    )  # fmt: skip
    r = run_conversation_bench(dataclasses.replace(base, seed=seed))
    assert [t.text for t in r.trials] == ["look at the camera", "look to your left"]
    for trial in r.trials:
        assert trial.correct, trial
        assert trial.mode == "text"
        assert trial.woke is None
        assert trial.words == 0  # no word error without speech
        assert trial.first_motion_ms is not None
