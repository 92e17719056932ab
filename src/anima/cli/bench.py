"""`anima bench …`: each benchmark prints its figures (no unit test asserts timings)."""

from __future__ import annotations

import dataclasses
import json
from typing import Annotated

import typer

from anima.cli import (
    bench_attention,
    bench_budget,
    bench_links,
    bench_listening,
    bench_motion,
    bench_realtime,
)

app = typer.Typer(help="Measure anima: each benchmark prints its figures.", no_args_is_help=True)
# the motion loop's own (loop, floor, tick): first in the command list
bench_motion.register(app)


@app.command("speech")
def bench_speech(
    utterances: Annotated[int, typer.Option(min=1, help="Utterances timed for end_speak.")] = 5,
    stops: Annotated[int, typer.Option(min=1, help="Barge-ins timed.")] = 5,
    loop: Annotated[
        bool,
        typer.Option(
            "--loop",
            help="Instead: the 100 Hz loop's missed deadlines and largest frame gap while each "
            "engine loads and synthesizes long text (2,000 characters; a 20,000-character clause).",
        ),
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """TTS first audio and speed per engine, sway cost, A/V offset, stop and end_speak timing."""
    from anima.bench.speech.speech import run_speech_bench, run_starvation_bench

    if loop:
        rows = run_starvation_bench()
        if as_json:
            typer.echo(json.dumps([dataclasses.asdict(x) for x in rows], indent=2))
            return
        for x in rows:
            audio = "" if x.first_audio_ms is None else (
                f", first audio {x.first_audio_ms:.0f} ms, {x.audio_s:.0f} s of audio"
            )  # fmt: skip
            typer.echo(
                f"{x.work:42} {x.missed:3} missed, largest gap {x.max_gap_ms:5.1f} ms "
                f"({x.ticks} frames in {x.seconds:.1f} s{audio})"
            )
        typer.echo("target: 0 missed, no gap over 20 ms (two periods)")
        return
    r = run_speech_bench(utterances, stops)
    if as_json:
        typer.echo(json.dumps(dataclasses.asdict(r), indent=2))
        return
    for e in r.engines:
        typer.echo(
            f"{e.engine:8} first audio {e.first_audio_ms:6.1f} ms, real-time factor "
            f"{e.real_time_factor:.3f} ({e.audio_s:.2f} s of audio in {e.synth_s * 1000:.0f} ms)"
        )
    typer.echo(f"sway per 50 ms hop : {r.sway_hop_us:.2f} µs")
    if r.end_lateness_ms:
        late = r.end_lateness_ms
        typer.echo(
            f"end_speak lateness : max {max(late):.2f} ms over {len(late)} ({r.service_engine})"
        )
    if r.stop_latency_ms:
        stop = r.stop_latency_ms
        typer.echo(f"stop → mouth rest  : max {max(stop):.1f} ms over {len(stop)}")
    typer.echo(f"A/V offset         : {r.av_offset_ms:+.1f} ms (mouth after sound when > 0)")


@app.command("gestures")
def bench_gestures(
    rounds: Annotated[int, typer.Option(min=1, help="Times through the sentences.")] = 2,
    sentences: Annotated[int, typer.Option(min=1, max=8, help="How many of the 8.")] = 8,
    engines: Annotated[str, typer.Option(help="Comma-separated TTS engines.")] = "piper,espeak",
) -> None:
    """Annotated speech: how late a ^start gesture starts after its word's audio onset."""
    import numpy as np

    from anima.bench.speech.gestures import run_gesture_bench
    from anima.config import SpeechConfig
    from anima.speech import close_engines, load_engines

    made, problems = load_engines(SpeechConfig(engines=tuple(engines.split(","))))
    for problem in problems:
        typer.echo(f"skipped: {problem}")
    try:
        for engine in made:
            f = run_gesture_bench(engine, rounds, sentences)
            late = np.array(f.lateness_ms)
            within = float(np.mean(np.abs(late) <= 10.0)) * 100
            typer.echo(
                f"{f.engine:7} gesture start − word onset over {len(late)}: p50 "
                f"{np.median(late):.1f}, p95 {np.percentile(late, 95):.1f}, min "
                f"{late.min():.1f}, max {late.max():.1f} ms; {within:.0f} % within one tick; "
                f"loop {f.missed_deadlines} missed of {f.ticks}"
            )
    finally:
        close_engines(made)  # Piper's worker process
    typer.echo(
        "target: within one tick (10 ms) of the word's onset (a tick's nominal time may come a few "
        "µs before the onset it saw)"
    )


@app.command("mqtt")
def bench_mqtt(
    broker: Annotated[str, typer.Option(help="mosquitto, embedded or both.")] = "both",
    commands: Annotated[int, typer.Option(min=1, help="look_at commands timed.")] = 1000,
    flood: Annotated[float, typer.Option(min=0.0, help="Seconds of 1 kHz look_at flood.")] = 10.0,
    refusals: Annotated[
        int, typer.Option(min=0, help="Unknown animations flooded, each to be refused.")
    ] = 20_000,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Command latency publish → first driver frame that reflects it, and two floods."""
    from anima.bench.doors.mqtt import run_mqtt_bench

    r = run_mqtt_bench(broker, commands, flood, refusals)
    if as_json:
        typer.echo(json.dumps(dataclasses.asdict(r), indent=2))
        return
    for b in r.brokers:
        lat = b.latency
        typer.echo(
            f"{b.broker:9} latency p50 {lat.p50_ms:.2f} ms, p99 {lat.p99_ms:.2f} ms, "
            f"max {lat.max_ms:.2f} ms ({lat.measured}/{lat.commands} commands; "
            f"target p99 ≤ {r.target_p99_ms:g} ms)"
        )
        f = b.flood
        if f is not None:
            rss = (
                f"RSS {f.rss_before_mb:.1f} → {f.rss_after_mb:.1f} MB"
                if f.rss_before_mb is not None and f.rss_after_mb is not None
                else "RSS n/a"
            )
            typer.echo(
                f"{'':9} flood {f.publish_rate_hz:.0f}/s for {f.seconds:g} s: loop "
                f"{f.loop_rate_hz:.2f} Hz, {f.loop_missed} missed, {f.coalesced} coalesced, {rss}"
            )
        rf = b.refusals
        if rf is not None:
            typer.echo(
                f"{'':9} refusals {rf.received}/{rf.sent} answered, p50 {rf.p50_ms:.0f} ms, "
                f"p99 {rf.p99_ms:.0f} ms, max {rf.max_ms:.0f} ms; loop {rf.loop_rate_hz:.2f} Hz, "
                f"{rf.loop_missed} missed, ≥ {rf.min_frames_per_s} frames in every second"
            )
    for name, why in r.skipped.items():
        typer.echo(f"{name:9} skipped: {why}")


@app.command("agent")
def bench_agent(
    trials: Annotated[int, typer.Option(min=1, help="Requests and interrupts timed.")] = 20,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Wake → recording, speech end → transcript, request → motion, interrupt → held."""
    from anima.bench.agent.agent import run_agent_bench

    r = run_agent_bench(trials)
    if as_json:
        typer.echo(json.dumps(dataclasses.asdict(r), indent=2))
        return
    li = r.listen
    typer.echo(
        f"wake → recording      : p50 {li.wake_to_recording_ms.p50:.2f} ms, "
        f"p99 {li.wake_to_recording_ms.p99:.2f} ms"
    )
    typer.echo(
        f"speech end → final    : p50 {li.speech_end_to_final_ms.p50:.0f} ms, "
        f"p99 {li.speech_end_to_final_ms.p99:.0f} ms (of which {li.endpoint_silence_ms:.0f} ms "
        f"is the endpoint silence); {li.correct}/{li.rounds} commands right ({li.voice})"
    )
    m = r.request_to_motion_ms
    typer.echo(f"transcript → motion   : p50 {m.p50:.1f} ms, p99 {m.p99:.1f} ms ({m.n} requests)")
    h = r.interrupt_held_ms
    typer.echo(
        f"interrupt → held      : p50 {h.p50:.1f} ms, p99 {h.p99:.1f} ms "
        f"(target p99 ≤ {r.interrupt_target_ms:g} ms)"
    )
    if r.hostile is not None:
        for x in r.hostile.replies:
            typer.echo(
                f"hostile planner       : {x.name}: apology after {x.turn_s:.2f} s "
                f"(timeout_s {r.hostile.timeout_s:g}), peak {x.peak_mb:.1f} MB"
            )
        typer.echo(f"                        the loop missed {r.hostile.missed_ticks} ticks")


@app.command("memory")
def bench_memory(
    split: Annotated[str, typer.Option(help="dev, heldout, fresh or all.")] = "all",
    planner: Annotated[str, typer.Option(help="rules, llm or both.")] = "both",
    memories: Annotated[
        int, typer.Option(min=0, help="Memories in the store whose cost is timed (0: skip).")
    ] = 10_000,
    spoken: Annotated[
        str, typer.Option(help="Also spoken by these voices and heard by Whisper (espeak-us,…).")
    ] = "",
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Facts told over three restarts and recalled in a fourth (rule planner, scripted LLM;
    typed, and spoken with --spoken); what forgetting leaves; what recall costs at 10,000."""
    from anima.bench.memory.facts import SPLITS
    from anima.bench.memory.memory import PLANNERS, run_memory_bench

    splits = tuple(SPLITS) if split == "all" else (split,)
    planners = PLANNERS if planner == "both" else (planner,)
    if not set(splits) <= set(SPLITS) or not set(planners) <= set(PLANNERS):
        typer.secho(
            f"error: --split is one of {', '.join(SPLITS)} or all; --planner rules, llm or both",
            fg=typer.colors.RED,
            err=True,
        )
        raise typer.Exit(code=2)
    from anima.cli.common import fail
    from anima.errors import AnimaError

    voices = tuple(v for v in spoken.split(",") if v)
    try:
        r = run_memory_bench(planners=planners, splits=splits, memories=memories, voices=voices)
    except AnimaError as exc:
        raise fail(exc) from exc
    if as_json:
        typer.echo(json.dumps(dataclasses.asdict(r), indent=2, default=str))
        return
    typer.echo("\n".join(r.lines()))


@app.command("serve")
def bench_serve(
    idle: Annotated[
        float, typer.Option(min=0.5, help="Seconds to idle (over 5: a status line).")
    ] = 6.0,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Start `anima serve` as a subprocess: time to first tick, idle memory, clean exit, and
    missed deadlines while the rest starts."""
    from anima.bench.serve.serve import run_serve_bench

    r = run_serve_bench(idle)
    if as_json:
        typer.echo(json.dumps(dataclasses.asdict(r), indent=2))
        return
    typer.echo(f"start to first tick : {r.start_to_first_tick_s * 1000:.0f} ms")
    typer.echo(f"start to ready      : {r.start_to_ready_s * 1000:.0f} ms (voices, doors loaded)")
    typer.echo(f"resident memory     : {r.rss_idle_mb:.1f} MB after {r.idle_s:g} s idle")
    typer.echo(f"SIGTERM to exit     : {r.exit_s * 1000:.0f} ms (exit code {r.exit_code})")
    if r.missed_since_start is None:
        typer.echo("loop while starting : no status line (idle longer than 5 s to get one)")
    else:
        typer.echo(
            f"loop while starting : {r.missed_since_start} missed deadlines, worst period error "
            f"{r.period_error_max_ms:.2f} ms (first tick → last status line)"
        )


@app.command("hostile")
def bench_hostile(
    seconds: Annotated[float, typer.Option(min=1.0, help="Longest flood, seconds.")] = 10.0,
    messages: Annotated[int, typer.Option(min=100, help="Messages in the flood.")] = 20_000,
    reply_mb: Annotated[float, typer.Option(min=0.001, help="The planner's reply, MB.")] = 1.0,
    asks: Annotated[int, typer.Option(min=1, help="Requests to the agent during the flood.")] = 10,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """`anima serve` with everything on, flooded over MQTT while its planner sends huge
    replies: the loop's largest frame gap and missed ticks, refusal latency, RSS."""
    from anima.bench.serve.hostile import run_hostile_bench

    r = run_hostile_bench(
        flood_seconds=seconds,
        flood_messages=messages,
        reply_bytes=int(reply_mb * 1_000_000),
        asks=asks,
    )
    if as_json:
        typer.echo(json.dumps(dataclasses.asdict(r), indent=2))
        return
    rows = [
        ("flood", f"{r.published} messages in {r.flood_seconds:.1f} s ({r.publish_rate_hz:.0f}/s)"),
        (
            "refusals",
            f"{r.refusals_received}/{r.refusals_sent} unknown names answered; "
            f"{r.errors_received} errors in all",
        ),
        (
            "refusal latency",
            f"p50 {r.refusal_p50_ms:.1f} ms, p99 {r.refusal_p99_ms:.1f} ms, "
            f"max {r.refusal_max_ms:.1f} ms",
        ),
        (
            "planner",
            f"{r.asks} asks, {r.planner_requests} replies of {r.reply_bytes / 1e6:g} MB, "
            f"{r.turns_spoken} turns ended speaking",
        ),
        ("estop / reset after", f"{r.estop_after_flood} / {r.reset_after_flood}"),
        (
            "estop behind a burst",
            f"{r.estop_latency_ms:.1f} ms after {r.estop_behind_burst} messages",
        ),
        (
            "loop",
            f"{r.frames} frames, largest gap {r.frame_gap_max_ms:.1f} ms, "
            f"{r.frame_gaps_over_2_periods} gaps over 20 ms, {r.missed_ticks} missed ticks",
        ),
        ("largest gaps", ", ".join(f"{ms:.1f} ms at {at:.2f} s" for at, ms in r.worst_gaps)),
        ("server RSS", f"{r.rss_before_mb:.0f} MB before, {r.rss_after_mb:.0f} MB after"),
        ("exit code", str(r.exit_code)),
    ]
    for name, value in rows:
        typer.echo(f"{name:<20}: {value}")


# the listening and conversation benchmarks (asr, conversation, wake, turn)
bench_listening.register(app)
# the links to a robot or a client (serial, grpc, mcp, reachy)
bench_links.register(app)
bench_attention.register(app)
bench_realtime.register(app)
bench_budget.register(app)
