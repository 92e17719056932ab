"""`anima bench asr | conversation | wake | turn | duplex`: the listening and conversation
benchmarks, registered on `anima bench` by :func:`register` (kept apart from the motion and door
benches)."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence
from typing import Annotated

import typer

from anima.cli.common import ConfigOpt, fail
from anima.errors import AnimaError


def register(app: typer.Typer) -> None:
    """Add the listening benchmarks to ``app`` (`anima bench`)."""
    app.command("asr")(bench_asr)
    app.command("conversation")(bench_conversation)
    app.command("wake")(bench_wake)
    app.command("turn")(bench_turn)
    app.command("duplex")(bench_duplex)


def _names(value: str, known: Sequence[str], what: str) -> tuple[str, ...]:
    """A comma-separated list of names, each one of ``known`` (a usage error otherwise)."""
    names = tuple(n.strip() for n in value.split(",") if n.strip())
    bad = [n for n in names if n not in known]
    if bad or not names:
        raise typer.BadParameter(
            f"unknown {what} {', '.join(bad)[:80]!r}; known: {', '.join(known)}"
        )
    return names


def bench_asr(
    recognizers: Annotated[
        str,
        typer.Option(
            help="Comma-separated: whisper, whisper-greedy, pocketsphinx-grammar, pocketsphinx-lm."
        ),
    ] = "whisper,pocketsphinx-grammar,pocketsphinx-lm",
    max_seconds: Annotated[
        float, typer.Option(min=10.0, help="Stop adding work past this.")
    ] = 170.0,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Word error (clean, white noise, babble), confidence, final latency, load and memory of
    the speech recognizers on TTS-spoken requests."""
    from anima.bench.asr.asr import RECOGNIZERS, report_lines, run_asr_bench

    names = _names(recognizers, list(RECOGNIZERS), "recognizer")
    r = run_asr_bench(recognizers=names, max_s=max_seconds)
    if as_json:
        typer.echo(json.dumps(dataclasses.asdict(r), indent=2))
        return
    for line in report_lines(r):
        typer.echo(line)


def bench_conversation(
    voices: Annotated[
        str,
        typer.Option(
            help="Comma-separated voices (espeak-us, espeak-gb-fast, espeak-us-slow, piper-joe)."
        ),
    ] = "espeak-us,espeak-gb-fast,espeak-us-slow,piper-joe",
    noises: Annotated[
        str, typer.Option(help="Comma-separated rooms (clean, white-25, babble-15, fan-15).")
    ] = "clean,white-25,babble-15",
    modes: Annotated[
        str,
        typer.Option(
            help='wake ("hey robot, …"), ptt (push-to-talk), text (the words as `ask`: '
            "understanding alone)."
        ),
    ] = "wake,ptt",
    split: Annotated[
        str, typer.Option(help="dev, heldout, both (the two), fresh, or all (the three).")
    ] = "both",
    category: Annotated[str, typer.Option(help="Only these categories (comma-separated).")] = "",
    limit: Annotated[
        int | None, typer.Option(min=1, help="At most this many requests per split.")
    ] = None,
    full: Annotated[
        bool,
        typer.Option(
            "--full", help="Every request in every condition (default: conditions rotate)."
        ),
    ] = False,
    max_seconds: Annotated[
        float, typer.Option(min=10.0, max=3600.0, help="No trial starts after this many seconds.")
    ] = 240.0,
    false_wake_s: Annotated[
        float, typer.Option(min=0.0, max=3600.0, help="Audio seconds of non-wake speech (0: skip).")
    ] = 60.0,
    config: ConfigOpt = None,
    duplex: Annotated[
        bool,
        typer.Option(
            "--duplex",
            help="Full duplex (listen.duplex: true): replies begin early, at a pause "
            "(listen.turn_early_s), and are taken back if the person goes on.",
        ),
    ] = False,
    detail: Annotated[bool, typer.Option("--detail", help="Also print every trial.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Requests spoken as people say them (several voices, rooms, wake or push-to-talk) to the
    real agent on the simulated robot: intent accuracy, wake, word error, refusals, latency."""
    from anima.bench.conversation.audio import NOISES, VOICES
    from anima.bench.conversation.conversation import BenchOptions, run_conversation_bench
    from anima.bench.conversation.report import report_lines
    from anima.config import load_config

    splits = {
        "both": ("dev", "heldout"), "dev": ("dev",), "heldout": ("heldout",), "fresh": ("fresh",),
        "all": ("dev", "heldout", "fresh"),
    }  # fmt: skip
    if split not in splits:
        raise typer.BadParameter(
            f"--split must be dev, heldout, fresh, both or all, got {split[:40]!r}"
        )
    options = BenchOptions(
        voices=_names(voices, list(VOICES), "voice"),
        noises=_names(noises, list(NOISES), "noise"),
        modes=_names(modes, ["wake", "ptt", "text"], "mode"),  # type: ignore[arg-type]
        splits=splits[split],  # type: ignore[arg-type]
        categories=tuple(c.strip() for c in category.split(",") if c.strip()),
        limit=limit,
        design="full" if full else "rotate",
        max_seconds=max_seconds,
        false_wake_s=false_wake_s,
        config=None,
    )
    if config is not None:
        try:
            options = dataclasses.replace(options, config=load_config(config))
        except AnimaError as exc:
            raise fail(exc) from None
    if duplex:
        from anima.config import AnimaConfig

        base = options.config or AnimaConfig()
        listen = dataclasses.replace(base.listen, duplex=True)
        options = dataclasses.replace(options, config=dataclasses.replace(base, listen=listen))
    try:
        r = run_conversation_bench(options)
    except AnimaError as exc:  # a missing voice, a bad evaluation set: one line, exit 2
        raise fail(exc) from None
    if as_json:
        typer.echo(json.dumps(dataclasses.asdict(r), indent=2))
        return
    for line in report_lines(r, detail=detail):
        typer.echo(line)


def bench_wake(
    spotter: Annotated[
        str, typer.Option(help="asr (Whisper) or keyphrase (pocketsphinx).")
    ] = "asr",
    max_seconds: Annotated[
        float, typer.Option(min=1.0, help="Stop adding work past this (the hits and the talk).")
    ] = 170.0,
    talk_minutes: Annotated[
        float,
        typer.Option(min=0.0, help="Then this many minutes of talk nobody tuned on (0: none)."),
    ] = 0.0,
) -> None:
    """Wake hit rate over voices, speeds and noise; false wakes on held-out talk and near misses;
    with --talk-minutes, false wakes per hour over the standard library's docstrings, spoken."""
    if spotter not in ("asr", "keyphrase"):
        raise typer.BadParameter("--spotter: asr or keyphrase")
    from anima.bench.wake.talk import main as talk_main
    from anima.bench.wake.wake import main as wake_main

    wake_main(max_s=max_seconds, kind=spotter)
    if talk_minutes > 0:
        talk_main(minutes=talk_minutes, max_s=max(60.0, talk_minutes * 30), kind=spotter)


def bench_turn(
    budget_seconds: Annotated[float, typer.Option(min=1.0, help="About this long in all.")] = 170.0,
) -> None:
    """End of turn on the turn-taking set (pauses cut into whole sentences, dev and held-out):
    delay after the last word (p50/p95) and cut-off rate per detector, voice and noise."""
    from anima.bench.turn.turn import run_turn_bench

    for line in run_turn_bench(budget_s=budget_seconds).lines():
        typer.echo(line)


def bench_duplex(
    budget_seconds: Annotated[float, typer.Option(min=1.0, help="About this long in all.")] = 600.0,
    split: Annotated[
        str,
        typer.Option(help="dev, heldout, fresh, unseen, later, blind (comma list), or all."),
    ] = "all",
    trials: Annotated[
        bool, typer.Option("--trials", help="Also one line per trial: what stopped the robot.")
    ] = False,
    barge_in_seconds: Annotated[
        float | None,
        typer.Option(min=0.05, max=5.0, help="listen.barge_in_s for the trials (default 0.8)."),
    ] = None,
    barge_in_confidence: Annotated[
        float | None,
        typer.Option(min=0.0, max=1.0, help="listen.barge_in_confidence (default 0.3)."),
    ] = None,
    echo: Annotated[str, typer.Option(help="The echo canceller: auto, webrtc or none.")] = "auto",
    loop_seconds: Annotated[
        float,
        typer.Option(
            min=0.0,
            max=600.0,
            help="Also the 100 Hz loop while the robot talks, "
            "this long each, half and full duplex (0: skip).",
        ),
    ] = 0.0,
) -> None:
    """Full duplex in a simulated room (the robot's own voice fed back with delay, gain and
    reverberation): false self-interruptions per minute, barge-in detection latency, backchannel
    false stops, echo return loss enhancement; with --loop-seconds, the loop's rate and lateness
    while the robot talks, half and full duplex."""
    from anima.bench.duplex.duplex import report, run_duplex_bench
    from anima.bench.duplex.sets import SPLITS

    splits = SPLITS if split in ("all", "both") else _names(split, SPLITS, "split")
    try:
        results = run_duplex_bench(
            splits, budget_s=budget_seconds, echo=echo, barge_in_s=barge_in_seconds,
            barge_in_confidence=barge_in_confidence,
        )  # fmt: skip
    except AnimaError as exc:
        fail(exc)
    typer.echo(report(results, trials=trials))
    if loop_seconds > 0:
        from anima.bench.duplex.loop import loop_while_talking

        typer.echo("the 100 Hz loop while the robot talks and listens:")
        for duplex in (False, True):
            typer.echo(loop_while_talking(duplex, loop_seconds).line())
