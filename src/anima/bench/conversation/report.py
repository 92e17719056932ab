"""The conversation bench's figures as lines of text, each beside its target."""

from __future__ import annotations

from anima.bench.conversation.conversation import ConversationBenchResult
from anima.bench.conversation.figures import STAGE_LABELS, TARGETS, Figures, Spread, spread

_HEAD = (
    f"{'group':24} {'n':>4} {'intent':>7} {'wake':>7} {'WER':>6} {'OOV ref':>8} "
    f"{'audio p50/p95 ms':>17} {'motion p50/p95 ms':>18}"
)


def _pct(x: float | None) -> str:
    return "—" if x is None else f"{100 * x:.0f} %"


def _ms(s: Spread) -> str:
    if s.p50 is None or s.p95 is None:
        return "—"
    return f"{s.p50:.0f}/{s.p95:.0f}"


def _row(name: str, f: Figures) -> str:
    return (
        f"{name:24} {f.trials:>4} {_pct(f.intent_accuracy):>7} {_pct(f.wake_hit_rate):>7} "
        f"{_pct(f.word_error_rate):>6} {_pct(f.refusal_rate):>8} {_ms(f.first_audio_ms):>17} "
        f"{_ms(f.first_motion_ms):>18}"
    )


_STAGE_GROUPS = ("overall", "noise=", "mode=")  # the groups whose stages are printed
_STAGE_HEAD = f"{'stages p50/p95 ms':24} " + " ".join(f"{v:>11}" for v in STAGE_LABELS.values())


def _stage_rows(groups: dict[str, Figures]) -> list[str]:
    """Where the first audio's time went, per stage (each from the moment before), for the
    split overall and per noise and mode."""
    rows = [_STAGE_HEAD]
    for name, f in groups.items():
        if name == "overall" or name.startswith(_STAGE_GROUPS[1:]):
            cells = [_ms(f.stages[k]) if k in f.stages else "—" for k in STAGE_LABELS]
            rows.append(f"{name:24} " + " ".join(f"{c:>11}" for c in cells))
    return rows


def report_lines(r: ConversationBenchResult, *, detail: bool = False) -> list[str]:
    """The report: engines, per split the overall and per-group figures, false wakes, the loop,
    the targets; ``detail``: every trial's verdict too."""
    lines = [
        "engines: " + ", ".join(f"{k} {v}" for k, v in r.engines.items()),
        f"load average {r.load_before[0]:.1f} at start, {r.load_after[0]:.1f} at end; "
        f"{len(r.trials)} trials in {r.seconds:.0f} s"
        + (f" ({r.skipped} not run: time limit)" if r.skipped else ""),
    ]
    for split, groups in r.figures.items():
        lines += ["", f"{split} {'(tuned on)' if split == 'dev' else '(measured only)'}", _HEAD]
        lines += [_row(name, f) for name, f in groups.items()]
        outcomes = groups["overall"].outcomes
        lines.append("outcomes: " + ", ".join(f"{k} {v}" for k, v in outcomes.items()))
        lines += ["", *_stage_rows(groups)]
    lines.append("")
    fw = r.false_wakes
    if fw is None:
        lines.append("false wakes: not measured")
    else:
        lines.append(
            f"false wakes: {fw.wakes} in {fw.audio_s:.0f} s of speech without the wake phrase "
            f"= {fw.per_hour:.0f}/hour (resolution {3600 / max(fw.audio_s, 1e-9):.0f}/hour)"
        )
    lines.append(_first_audio_line(r))
    if r.duplex:
        lines.append(
            f"full duplex: {r.early_replies} replies begun early (at a pause), "
            f"{r.taken_back} of them taken back"
        )
    lines.append(
        f"loop: {r.loop_rate_hz:.2f} Hz, {r.loop_missed} missed ticks over the trials, "
        f"lateness p99 {r.loop_p99_ms:.2f} ms, max {r.loop_max_ms:.2f} ms"
    )
    t = TARGETS
    lines.append(
        f"targets: intent ≥ {100 * t['intent_accuracy']:.0f} %, first audio p50 ≤ "
        f"{t['first_audio_p50_ms']:.0f} ms, wake ≥ {100 * t['wake_hit_rate']:.0f} %, "
        f"≤ {t['false_wakes_per_hour']:g} false wake/hour, WER ≤ {100 * t['word_error_rate']:.0f} %"
    )
    if detail:
        lines += ["", "trials:"]
        for x in r.trials:
            mark = "ok " if x.correct else "NO "
            lines.append(
                f"{mark} {x.split:7} {x.voice:14} {x.noise:9} {x.mode:4} {x.text[:36]!r:38} "
                f"heard {x.transcript[:30]!r}: {x.outcome}: {x.detail[:90]}"
            )
    return lines


def _first_audio_line(r: ConversationBenchResult) -> str:
    """The first audio over every split's trials, and over those whose reply began with words
    (no move before its first audio: "wave and say hello" speaks after the wave, by request)."""
    spoke = [t for t in r.trials if t.first_audio_ms is not None]
    first = [
        t for t in spoke
        if t.first_motion_ms is None or t.first_audio_ms <= t.first_motion_ms  # type: ignore[operator]
    ]  # fmt: skip
    every, words = spread(t.first_audio_ms for t in spoke), spread(t.first_audio_ms for t in first)
    return (
        f"first audio, all splits: p50/p95 {_ms(every)} ms over {every.n} trials that spoke; "
        f"{_ms(words)} ms over the {words.n} whose reply began with words (a move before the "
        "words, as asked, left out)"
    )
